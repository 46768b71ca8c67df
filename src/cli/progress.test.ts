import { describe, expect, it } from 'vitest';
import { RequestTable } from '../model/request-table.ts';
import type { ScenarioResult } from '../report/results.ts';
import { ProgressView, summaryTable, wantsLiveView, type ProgressStream } from './progress.ts';

class FakeStream implements ProgressStream {
  text = '';
  isTTY: boolean;
  columns = 160;
  constructor(isTTY: boolean) {
    this.isTTY = isTTY;
  }
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

const result: ScenarioResult = {
  id: 'backend-delete-http',
  profile: 'mutant-exit-on-sigterm',
  verdict: 'fail',
  durationMs: 3100,
  assertions: [{ name: 'noFailedRequests', verdict: 'fail', message: '4 of 300 requests failed (4 eof)' }],
  counts: { requests: 300, ok: 296, failed: 4, byOutcome: { ok: 296, eof: 4 }, connections: 16 },
};

function drive(view: ProgressView, clock: { t: number }) {
  const timeline = { requests: new RequestTable() };
  view.onBegin({ provider: 'local', pairs: [{ scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm' }] });
  view.onPairBegin({ scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', timeline });
  view.onProgress({ scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', phase: 'running' });
  for (const outcome of ['ok', 'ok', 'eof'] as const) timeline.requests.push({ id: 1, load: 'http', start: 0, end: 1, outcome, newConnection: true });
  clock.t += 2500;
  view.onProgress({ scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', phase: 'running', message: 'step delete: delete-pod' });
  view.onPairEnd(result);
  view.stop();
}

const ESC = '\x1b[';

describe('progress', () => {
  it('on a terminal redraws one status line in place, with counts and elapsed time', () => {
    const stream = new FakeStream(true);
    const clock = { t: 0 };
    drive(new ProgressView({ stream, live: wantsLiveView(stream, {}), now: () => clock.t }), clock);
    expect(stream.text.startsWith(`${ESC}?25l`)).toBe(true); // cursor hidden while drawing
    expect(stream.text).toContain(`\r${ESC}2K⠋ [1/1] backend-delete-http [mutant-exit-on-sigterm] running: step delete: delete-pod · 2 ok · 1 failed · 2.5 s`);
    expect(stream.text).toContain(`\r${ESC}2KFAIL backend-delete-http [mutant-exit-on-sigterm] 3.1 s, 300 requests, 4 failed\n`);
    expect(stream.text.endsWith(`\r${ESC}2K${ESC}?25h`)).toBe(true); // cleared and cursor back
    // Status lines are never terminated by a newline: they are redrawn.
    expect(stream.text).not.toMatch(/running[^\n\r]*\n/);
  });

  it('counts a run after another afresh (one per Kubernetes version), its status line drawn again', () => {
    const stream = new FakeStream(true);
    const clock = { t: 0 };
    const view = new ProgressView({ stream, live: true, now: () => clock.t });
    drive(view, clock);
    view.onEnd();
    stream.text = '';
    const pair = { scenario: 'backend-delete-http', profile: 'reference' };
    view.onBegin({ provider: 'netns', pairs: [pair, { ...pair, profile: 'mutant-exit-on-sigterm' }] });
    view.onProgress({ ...pair, phase: 'running' });
    view.stop();
    expect(stream.text.startsWith(`${ESC}?25l`)).toBe(true);
    expect(stream.text).toContain('[1/2] backend-delete-http [reference] running');
    expect(stream.text.endsWith(`\r${ESC}2K${ESC}?25h`)).toBe(true);
  });

  it('without a terminal, or under CI, prints plain lines and no control sequences', () => {
    for (const [isTTY, env] of [
      [false, {}],
      [true, { CI: 'true' }],
    ] as const) {
      const stream = new FakeStream(isTTY);
      const clock = { t: 0 };
      const view = new ProgressView({ stream, live: wantsLiveView(stream, env), now: () => clock.t });
      expect(view.live).toBe(false);
      drive(view, clock);
      expect(stream.text).not.toContain('\x1b');
      expect(stream.text.split('\n')).toEqual([
        '  [1/1] backend-delete-http [mutant-exit-on-sigterm] running · 0.0 s',
        '  [1/1] backend-delete-http [mutant-exit-on-sigterm] running: step delete: delete-pod · 2 ok · 1 failed · 2.5 s',
        'FAIL backend-delete-http [mutant-exit-on-sigterm] 3.1 s, 300 requests, 4 failed',
        '    fail: noFailedRequests: 4 of 300 requests failed (4 eof)',
        '',
      ]);
    }
  });

  it('ends with a summary table', () => {
    const lines = summaryTable([{ ...result, profile: 'reference', verdict: 'pass', assertions: [] }, result], 100);
    expect(lines).toEqual([
      '      scenario             profile                    sent  dropped   time',
      'PASS  backend-delete-http  reference               300 req        4  3.1 s',
      'FAIL  backend-delete-http  mutant-exit-on-sigterm  300 req        4  3.1 s  noFailedRequests: 4 of …',
    ]);
  });
});
