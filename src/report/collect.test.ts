import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropResult, mergeResults } from './collect.ts';
import type { ScenarioResult } from './results.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const result = (id: string): ScenarioResult => ({
  id,
  profile: 'reference',
  verdict: 'pass',
  durationMs: 10,
  assertions: [],
  counts: { requests: 0, ok: 0, failed: 0, byOutcome: {}, connections: 0 },
});

describe('collecting results from several processes', () => {
  it('merges the dropped results into one run, in the order they finished; nothing dropped is no run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-collect-'));
    dirs.push(dir);
    const startedAt = new Date('2026-01-01T00:00:00Z');
    expect(await mergeResults(dir, { startedAt, durationMs: 1 })).toBeUndefined();
    await dropResult(dir, result('backend-delete-http'));
    await new Promise((r) => setTimeout(r, 5));
    await dropResult(dir, result('backend-idle-exit'));
    expect((await readdir(dir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
    const run = await mergeResults(dir, { startedAt, durationMs: 1234 });
    expect(run).toMatchObject({ tool: { name: 'zerodrop' }, provider: 'local', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1234 });
    expect(run?.scenarios.map((s) => s.id)).toEqual(['backend-delete-http', 'backend-idle-exit']);
  });
});
