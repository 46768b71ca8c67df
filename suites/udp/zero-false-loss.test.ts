// No chaos, no loss: UDP flows through the local Service balancer to the reference echo lose
// nothing. Small here (2,000 packets/s across 10 flows for 3 s, three runs in a row); the
// full figure (20,000/s, 50 flows, 30 s, 20 runs) is `npm run bench`, on src/runner/udp-soak.ts.

import { describe, expect, it } from 'vitest';

import { runUdpEchoSoak } from '../../src/runner/udp-soak.ts';

describe('UDP accounting with no chaos', () => {
  it('reports zero lost packets at 2,000 packets/s across 10 flows for 3 s, three runs in a row', async () => {
    for (let run = 0; run < 3; run++) {
      const r = await runUdpEchoSoak({ flows: 10, ratePerFlow: 200, durationMs: 3000 });
      const why = r.assertions.map((a) => `${a.verdict} ${a.name}: ${a.message}`).join('\n');
      expect(r.summary.sent, why).toBe(6000);
      expect(r.summary.lost, why).toBe(0);
      expect(r.summary.duplicated, why).toBe(0);
      // Not `pass` only when the machine could not hold the rate: then inconclusive, never a loss.
      expect(['pass', 'inconclusive'], why).toContain(r.verdict);
      expect(r.assertions.find((a) => a.name === 'noLostPackets')?.verdict, why).toBe('pass');
      expect(r.timeline.udpFlows?.every((f) => f.packetsIn === 600 && f.packetsOut === 600), why).toBe(true);
    }
  });
});
