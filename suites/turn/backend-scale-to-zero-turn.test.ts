// backend-scale-to-zero-turn locally: the TURN allocations relay to the backend pod's own address
// while it terminates. coturn checks no peer against discovered backends, so it relays to the
// terminating pod until the flows end. The failing side is STUNner 0.18.0 on the netns cluster
// (suites/netns/scenarios.test.ts), whose peer check drops a terminating pod at once.

import { describe, expect, it } from 'vitest';
import { findProfile } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import { describeResult, expectPass, runCase } from '../helpers/run-case.ts';

const missing = missingRequirement(findProfile('coturn')!);

describe('backend-scale-to-zero-turn', () => {
  it.skipIf(missing !== undefined)("passes through coturn: every packet to the terminating backend pod's own address is relayed while it serves", async () => {
    const r = await runCase('backend-scale-to-zero-turn', 'coturn');
    expectPass(r);
    expect(r.assertions.find((a) => a.name === 'noLostPackets')?.message, describeResult(r)).toMatch(/0 of \d+/);
  });
});
