import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evaluate } from '../assert/index.ts';
import { drainScenario, TimelineBuilder } from '../../test-support/assert.ts';
import { joinRequestsToConnections } from '../observe/join.ts';
import { RequestTable } from '../model/request-table.ts';
import { RECORDS_FORMAT, RecordsStream } from './records-file.ts';
import { countsOf, describeCounts, droppedOf, finishRecords, readResults, recordsName, resultsJson, writeResults, type RunResult, type ScenarioResult } from './results.ts';

describe('countsOf', () => {
  it('counts requests by outcome and the balancer connections', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    joinRequestsToConnections(tl);
    expect(countsOf(tl)).toEqual({
      requests: 760,
      ok: 755,
      failed: 5,
      byOutcome: { ok: 755, refused: 4, eof: 1 },
      connections: 760,
    });
  });

  it('does not count as dropped the failures of loads no assertion judges (overlong requests cut by design)', () => {
    const b = new TimelineBuilder();
    b.request({ start: 0, end: 10 });
    b.request({ start: 0, end: 9000, load: 'overlong-1', outcome: 'eof' });
    const judgedAll = countsOf(b.build());
    expect(droppedOf(judgedAll)).toBe(1);
    const counts = countsOf(b.build(), ['overlong-1']);
    expect(counts).toMatchObject({ requests: 2, failed: 1, notJudged: 1 });
    expect(droppedOf(counts)).toBe(0);
    expect(describeCounts(counts)).toBe('2 requests, 1 failed (1 not judged: cut at the drain timeout by design)');
  });
});

describe('writeResults / readResults', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'zerodrop-results-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function run(): RunResult {
    const timeline = drainScenario('exit-on-sigterm').build();
    const assertions = evaluate([{ assert: 'noFailedRequests' }], timeline);
    return {
      tool: { name: 'zerodrop', version: '0.1.0', node: process.version },
      provider: 'local',
      startedAt: new Date(timeline.originEpochMs).toISOString(),
      durationMs: 4321,
      scenarios: [
        {
          id: 'backend-delete-http',
          profile: 'mutant-exit-on-sigterm',
          verdict: 'fail',
          durationMs: 4300,
          assertions,
          counts: countsOf(timeline),
          timeline,
        },
        {
          id: 'gateway-delete-turn',
          profile: 'coturn',
          verdict: 'skipped',
          durationMs: 0,
          reason: 'coturn is not installed (apt-get install coturn)',
          assertions: [],
          counts: { requests: 0, ok: 0, failed: 0, byOutcome: {}, connections: 0 },
        },
      ],
    };
  }

  it('round-trips a run through DIR/results.json, creating DIR', async () => {
    const nested = join(dir, 'a', 'b');
    const original = run();
    const path = await writeResults(nested, original);
    expect(path).toBe(join(nested, 'results.json'));
    const back = await readResults(nested);
    const { records, ...first } = back.scenarios[0] as ScenarioResult;
    expect(records).toEqual({
      format: RECORDS_FORMAT,
      requests: 'records/01-backend-delete-http.mutant-exit-on-sigterm.requests.gz',
      count: 760,
      connections: 'records/01-backend-delete-http.mutant-exit-on-sigterm.connections.gz',
      connectionCount: 760,
    });
    expect({ ...back, scenarios: [first, back.scenarios[1]] }).toEqual(original);
    expect(first.timeline?.requests.toArray()).toEqual(original.scenarios[0]?.timeline?.requests.toArray());
    expect(back.scenarios[0]?.assertions[0]).toMatchObject({ name: 'noFailedRequests', verdict: 'fail' });
  });

  it('keeps every failed request in full in results.json, and every request in the records file', async () => {
    const original = run();
    await writeResults(dir, original);
    const json = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as RunResult;
    const failed = original.scenarios[0]?.timeline?.requests.failed();
    expect(failed).toHaveLength(5);
    expect(json.scenarios[0]?.timeline?.requests).toEqual(failed);
    expect(json.scenarios[0]?.records?.count).toBe(760);
    const connections = original.scenarios[0]?.timeline?.connections ?? [];
    expect(json.scenarios[0]?.timeline?.connections).toEqual(connections.filter((c) => c.upstream !== 'ok' && c.upstream !== 'open'));
    expect(json.scenarios[0]?.timeline?.connections.length).toBeLessThan(connections.length);
    expect((await readResults(dir)).scenarios[0]?.timeline?.connections).toEqual(connections);
  });

  it('reads a results.json written before the records file, with every request inline', async () => {
    const original = run();
    const old = JSON.parse(resultsJson(original)) as RunResult;
    (old.scenarios[0]?.timeline as unknown as { requests: unknown }).requests = original.scenarios[0]?.timeline?.requests.toArray();
    await writeFile(join(dir, 'results.json'), JSON.stringify(old));
    const back = await readResults(dir);
    expect(back.scenarios[0]?.timeline?.requests.length).toBe(760);
    expect(back.scenarios[0]?.timeline?.requests.toArray()).toEqual(original.scenarios[0]?.timeline?.requests.toArray());
  });

  it('says which scenario and file when a records file is missing or cut short', async () => {
    await writeResults(dir, run());
    const file = join(dir, 'records', '01-backend-delete-http.mutant-exit-on-sigterm.requests.gz');
    const bytes = await readFile(file);
    await writeFile(file, bytes.subarray(0, bytes.length - 40));
    await expect(readResults(dir)).rejects.toThrow(/backend-delete-http x mutant-exit-on-sigterm: cannot read its records file records\/01-backend-delete-http/);
    await rm(file);
    await expect(readResults(dir)).rejects.toThrow(/cannot read its records file .*ENOENT/);
  });

  it('writes pretty JSON with the contract fields', async () => {
    await writeResults(dir, run());
    const text = await readFile(join(dir, 'results.json'), 'utf8');
    expect(text).toMatch(/^\{\n {2}"tool": \{\n {4}"name": "zerodrop"/);
    expect(text.endsWith('}\n')).toBe(true);
    const json = JSON.parse(text) as { scenarios: Record<string, unknown>[] };
    expect(Object.keys(json.scenarios[0] ?? {})).toEqual(
      expect.arrayContaining(['id', 'profile', 'verdict', 'durationMs', 'assertions', 'counts']),
    );
  });

  it('overwrites an earlier results.json, and removes the records files it no longer points to', async () => {
    await writeResults(dir, run());
    await writeFile(join(dir, 'records', 'writing-now.requests.gz.123.partial'), '');
    const second = { ...run(), provider: 'kind', scenarios: [] };
    await writeResults(dir, second);
    expect((await readResults(dir)).provider).toBe('kind');
    expect(await readdir(join(dir, 'records'))).toEqual(['writing-now.requests.gz.123.partial']);
  });

  it('keeps the records a run wrote as it went (a RecordsStream) instead of writing them again', async () => {
    const original = run();
    const first = original.scenarios[0] as ScenarioResult & { timeline: NonNullable<ScenarioResult['timeline']> };
    const name = recordsName(1, first.id, first.profile);
    const rows = first.timeline.requests.toArray();
    const table = new RequestTable();
    {
      await using stream = RecordsStream.open(join(dir, `${name}.requests.gz`), table);
      for (const r of rows) table.push(r);
      first.records = await finishRecords(dir, name, stream, first.timeline);
    }
    first.timeline = { ...first.timeline, requests: table };
    const file = join(dir, `${name}.requests.gz`);
    const written = (await stat(file)).mtimeMs;
    await mkdir(join(dir, 'records'), { recursive: true });
    await writeFile(join(dir, 'records', '07-an-earlier.run.requests.gz'), 'stale');
    await new Promise((r) => setTimeout(r, 20));
    await writeResults(dir, original);
    expect((await stat(file)).mtimeMs).toBe(written);
    expect((await readdir(join(dir, 'records'))).sort()).toEqual([`${name.split('/')[1]}.connections.gz`, `${name.split('/')[1]}.requests.gz`]);
    const back = await readResults(dir);
    expect(back.scenarios[0]?.records).toEqual(first.records);
    expect(back.scenarios[0]?.timeline?.requests.toArray()).toEqual(rows);
    expect(back.scenarios[0]?.timeline?.connections).toEqual(first.timeline.connections);

    // A pointer read back is no proof that the files under its names are its own: written again.
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(join(elsewhere, 'records'), { recursive: true });
    for (const kind of ['requests', 'connections']) await writeFile(join(elsewhere, 'records', `${name.split('/')[1]}.${kind}.gz`), 'an earlier run');
    await writeResults(elsewhere, back);
    expect((await readResults(elsewhere)).scenarios[0]?.timeline?.requests.toArray()).toEqual(rows);
  });

  it('reads records files of format 1 (written before refinements had a frame)', async () => {
    await writeResults(dir, run());
    const path = join(dir, 'results.json');
    const json = JSON.parse(await readFile(path, 'utf8')) as RunResult;
    (json.scenarios[0]?.records as { format: string }).format = 'zerodrop-requests/1';
    await writeFile(path, JSON.stringify(json));
    expect((await readResults(dir)).scenarios[0]?.timeline?.requests.length).toBe(760);
    (json.scenarios[0]?.records as { format: string }).format = 'zerodrop-requests/9';
    await writeFile(path, JSON.stringify(json));
    await expect(readResults(dir)).rejects.toThrow(/format "zerodrop-requests\/9" is not one this zerodrop reads/);
  });

  it('rejects a file that is not zerodrop results', async () => {
    await writeFile(join(dir, 'results.json'), JSON.stringify({ tool: { name: 'other' }, scenarios: [] }));
    await expect(readResults(dir)).rejects.toThrow(/is not a zerodrop results file/);
    await expect(readResults(join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});
