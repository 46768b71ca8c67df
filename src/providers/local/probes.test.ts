import { describe, expect, it } from 'vitest';
import { defaultProbe } from '../../model/workload.ts';
import { probeCheck } from './probes.ts';

const container = { cwd: process.cwd(), env: { ...process.env, MARK: 'ready' } };
const check = (command: string[], timeoutSeconds = 1) => probeCheck(defaultProbe({ exec: { command } }, { timeoutSeconds }), '127.0.0.1', container)(new AbortController().signal);

describe('exec readiness probe (local provider)', () => {
  it('succeeds when the command exits 0 in the container environment, fails otherwise', async () => {
    expect(await check(['sh', '-c', 'test "$MARK" = ready'])).toBe(true);
    expect(await check(['sh', '-c', 'test "$MARK" = other'])).toBe(false);
    expect(await check(['no-such-program-zerodrop'])).toBe(false);
  });

  it('fails a command that outlasts the timeout, and ends it', async () => {
    const started = performance.now();
    expect(await check(['sleep', '5'], 0.2)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('needs the container to run in', () => {
    expect(() => probeCheck(defaultProbe({ exec: { command: ['true'] } }), '127.0.0.1')).toThrow(/needs the container/);
  });
});
