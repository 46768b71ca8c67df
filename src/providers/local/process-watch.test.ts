import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PROCESS_POLL_MS, ProcessWatch } from './process-watch.ts';

describe.skipIf(process.platform !== 'linux')('ProcessWatch', () => {
  it('records each process of a container as it appears and ends, the main process left out', async () => {
    // A worker replaced by another, as a reload does: the first ends, the second starts after it.
    const main = spawn('sh', ['-c', 'sleep 0.3 & wait; sleep 5 & wait'], { detached: true, stdio: 'ignore' });
    const events: { kind: string; pid: number; command: string; t: number }[] = [];
    const watch = new ProcessWatch(main.pid!, () => performance.now(), (kind, detail, t) => events.push({ kind, pid: Number(detail['pid']), command: String(detail['command']), t: t ?? performance.now() }));
    try {
      watch.start(PROCESS_POLL_MS);
      // Until the second worker has been seen under its own name: a busy machine starts them late.
      for (const deadline = performance.now() + 5000; performance.now() < deadline && !events.some((e) => e.command === 'sleep 5'); ) await sleep(20);
      process.kill(-main.pid!, 'SIGKILL');
      await new Promise((resolve) => main.once('exit', resolve));
      watch.stop();
    } finally {
      watch.cancel();
    }
    const started = events.filter((e) => e.kind === 'process-started');
    expect(started.map((e) => e.command)).toEqual(['sleep 0.3', 'sleep 5']);
    expect(started.some((e) => e.pid === main.pid)).toBe(false);
    const first = started[0]!;
    const ended = events.find((e) => e.kind === 'process-exited' && e.pid === first.pid);
    expect(ended?.t).toBeGreaterThan(first.t);
    // The second was still running when the main process ended: its end is recorded by the last look.
    expect(events.filter((e) => e.kind === 'process-exited').map((e) => e.command)).toEqual(['sleep 0.3', 'sleep 5']);
  });
});
