import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Clock } from '../../observe/clock.ts';
import { onPath } from '../../profiles/requirements.ts';
import { parseNewFlow, watchRoutedConnections } from './conntrack-watch.ts';

describe('parseNewFlow', () => {
  it('reads the time, the original tuple and the reply source (the pod after DNAT) of a new TCP entry', () => {
    const line = '[1795878576.395879]\t    [NEW] tcp      6 120 SYN_SENT src=198.18.0.254 dst=198.18.0.10 sport=40312 dport=30080 [UNREPLIED] src=198.18.33.7 dst=198.18.0.10 sport=8080 dport=40312';
    expect(parseNewFlow(line)).toEqual({ wallMs: 1795878576395.879, src: '198.18.0.254', dst: '198.18.0.10', sport: 40312, dport: 30080, replySrc: '198.18.33.7' });
  });

  it('reads the fraction as a fraction whatever its digits', () => {
    expect(parseNewFlow('[10.05]\t [NEW] tcp 6 120 SYN_SENT src=a dst=b sport=1 dport=2 [UNREPLIED] src=c dst=d sport=3 dport=4')?.wallMs).toBe(10050);
  });

  it('ignores what is not a new TCP entry (the summary conntrack prints at its end, an update)', () => {
    expect(parseNewFlow('conntrack v1.4.7 (conntrack-tools): 2 flow events have been shown.')).toBeUndefined();
    expect(parseNewFlow('[1795878576.395879]\t [UPDATE] tcp 6 60 SYN_RECV src=a dst=b sport=1 dport=2 src=c dst=d sport=3 dport=4')).toBeUndefined();
  });
});

// A namespace of its own with a DNAT as kube-proxy's (127.0.0.2:30080 to 127.0.0.3:8080): the watch
// sees the connection with the client's port and the DNAT's target, on the run clock.
describe.skipIf(process.getuid?.() !== 0 || !onPath('conntrack', process.env['PATH'] ?? ''))('watchRoutedConnections', () => {
  it('reports each new connection to the watched address with its client port and where the node sent it', async () => {
    const netns = `zdtest-ct-${randomBytes(3).toString('hex')}`;
    execFileSync('ip', ['netns', 'add', netns]);
    let watch: ReturnType<typeof watchRoutedConnections> | undefined;
    try {
      execFileSync('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      execFileSync('ip', ['netns', 'exec', netns, 'nft', '-f', '-'], {
        input: 'table ip t {\n chain out {\n  type nat hook output priority -100;\n  ip daddr 127.0.0.2 tcp dport 30080 dnat to 127.0.0.3:8080\n }\n}\n',
      });
      const clock = new Clock(performance.timeOrigin + performance.now() - 5000);
      const originEpochMs = clock.originEpochMs;
      const problems: string[] = [];
      watch = watchRoutedConnections({ netns, client: '127.0.0.1', to: '127.0.0.2', clock, onProblem: (m) => problems.push(m) });
      // Refused (nothing listens on 127.0.0.3:8080): the entry is made all the same.
      const connect = (host: string, port: number) => spawnSync('ip', ['netns', 'exec', netns, 'bash', '-c', `exec 3<>/dev/tcp/${host}/${port}`], { stdio: 'ignore' });
      // A watch reports only what happens once conntrack listens, which on a busy machine can take
      // longer than any fixed wait: connections until it has seen one, as the provider's deploy does.
      let probes = 0;
      for (const deadline = Date.now() + 10_000; !watch.seenAny() && Date.now() < deadline; probes++) {
        connect('127.0.0.2', 30080);
        await sleep(100);
      }
      expect(watch.seenAny()).toBe(true);
      const before = Date.now() - originEpochMs;
      connect('127.0.0.2', 30080);
      connect('127.0.0.4', 30080);
      const after = Date.now() - originEpochMs;
      await sleep(300);
      const routed = await watch.stop();
      expect(problems).toEqual([]);
      // The probes' (some of which may have come before conntrack listened) and the one to 127.0.0.2; not 127.0.0.4's.
      expect(routed.length).toBeGreaterThanOrEqual(2);
      expect(routed.length).toBeLessThanOrEqual(probes + 1);
      const last = routed.at(-1)!;
      expect(last).toMatchObject({ to: { host: '127.0.0.2', port: 30080 }, podIp: '127.0.0.3' });
      expect(last.clientPort).toBeGreaterThan(0);
      // On the run clock: conntrack stamps an event when it reads it, a moment after the SYN.
      expect(last.t).toBeGreaterThanOrEqual(before - 5);
      expect(last.t).toBeLessThanOrEqual(after + 2000);
    } finally {
      // A failed expectation must not leave its conntrack -E behind (stop() is safe twice).
      await watch?.stop();
      spawnSync('ip', ['netns', 'del', netns], { stdio: 'ignore' });
    }
  });
});
