import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_ROWS, RequestTable } from '../model/request-table.ts';
import type { Outcome, RequestRecord } from '../model/timeline.ts';
import { decodeRecords, encodeRecords, readRecordsFile, RecordsStream, writeRecordsFile } from './records-file.ts';

/** Rows over more than two chunks, with every field, present and absent, and names from several pods. */
function requests(n: number): RequestRecord[] {
  const outcomes: Outcome[] = ['ok', 'ok', 'ok', 'refused', 'reset', 'status', 'timeout'];
  return Array.from({ length: n }, (_, i) => {
    const outcome = outcomes[i % outcomes.length] as Outcome;
    const r: RequestRecord = { id: i + 1, load: i % 2 ? 'http' : 'new-connections', start: i * 0.25, end: i * 0.25 + 1.125, outcome, newConnection: i % 3 === 0 };
    if (outcome === 'ok' || outcome === 'status') r.status = outcome === 'ok' ? 200 : 503;
    if (i % 5 !== 0) r.pod = `gw-${i % 3}`;
    if (i % 4 === 0) r.backendPod = `backend-${i % 7}`;
    if (i % 2 === 0) r.gateway = r.pod;
    if (i % 11 !== 0) r.localPort = 1024 + (i % 60_000);
    if (i % 13 === 0) r.connectionStart = i * 0.25 - 0.5;
    if (i % 17 === 0) r.streamId = 2 * i + 1;
    if (outcome !== 'ok') r.error = `E${outcome.toUpperCase()} at ${i}`;
    if (i % 9 !== 0) r.path = '/';
    if (i % 19 !== 0) r.service = 'gateway';
    if (i % 23 === 0) r.direct = true;
    return r;
  });
}

describe('records file', () => {
  const dir = mkdtemp(join(tmpdir(), 'zerodrop-records-'));
  afterAll(async () => rm(await dir, { recursive: true, force: true }));
  const rows = requests(2 * CHUNK_ROWS + 123);
  const table = RequestTable.from(rows);

  it('gives back every request, field for field, across chunks', async () => {
    const path = join(await dir, 'r.gz');
    await writeRecordsFile(path, table);
    const back = await readRecordsFile(path);
    expect(back.length).toBe(rows.length);
    expect(back.okCount).toBe(table.okCount);
    expect(back.toArray()).toEqual(rows);
  });

  it('keeps pods apart: each row reads back the pod it was recorded with', () => {
    const pods = new Set(rows.map((r) => r.pod));
    expect(pods.size).toBe(4);
    table.scan((r) => {
      if (r.pod !== rows[r.i]?.pod || r.backendPod !== rows[r.i]?.backendPod) throw new Error(`row ${r.i} reads pod ${String(r.pod)}`);
    });
  });

  it('writes names interned after a chunk was filled (a join adds a pod) before they are needed', async () => {
    const t = RequestTable.from(requests(10));
    t.refine(0, { pod: 'named-by-the-balancer', outcome: 'refused' });
    const back = await decodeRecords(await encodeRecords(t));
    expect(back.at(0)).toMatchObject({ pod: 'named-by-the-balancer', outcome: 'refused' });
    expect(back.toArray()).toEqual(t.toArray());
  });

  it('costs under 100 bytes a request on disk and 200 in memory (the scale target, docs/benchmarks.md), chunks and names included', async () => {
    const bytes = await encodeRecords(table);
    console.log(`records: ${(bytes.length / rows.length).toFixed(1)} B/request on disk, ${(table.bytes() / rows.length).toFixed(1)} B/request in memory`);
    expect(bytes.length / rows.length).toBeLessThan(100);
    expect(table.bytes() / rows.length).toBeLessThan(200);
  });

  it('refuses a file cut short, with a chunk missing, or not a records file', async () => {
    const raw = gunzipSync(await encodeRecords(table));
    await expect(decodeRecords(gzipSync(raw.subarray(0, raw.length - 9)), 'x.gz')).rejects.toThrow(/x\.gz is not a zerodrop records file .*cut short/);
    // Drop the last chunk frame but keep the end frame: the count no longer matches.
    const end = raw.subarray(raw.length - 9);
    let at = 8;
    let lastChunk = 0;
    while (at < raw.length - 9) {
      if (raw[at] === 0x43) lastChunk = at;
      at += 5 + raw.readUInt32LE(at + 1);
    }
    const withoutLast = Buffer.concat([raw.subarray(0, lastChunk), end]);
    await expect(decodeRecords(gzipSync(withoutLast), 'y.gz')).rejects.toThrow(/y\.gz .*rows where its end says/);
    await expect(decodeRecords(gzipSync(Buffer.from('{"not":"records"}')), 'z.gz')).rejects.toThrow(/z\.gz is not a zerodrop records file.*wrong header/);
  });
});

describe('RecordsStream: the records file written as the run goes', () => {
  const dir = mkdtemp(join(tmpdir(), 'zerodrop-records-stream-'));
  afterAll(async () => rm(await dir, { recursive: true, force: true }));

  /** Bytes in `dir`'s one .partial file, once the gzip stream has handed some to the disk (up to 5 s). */
  async function partialBytes(where: string): Promise<number> {
    for (let waited = 0; waited < 5000; waited += 20) {
      const partial = (await readdir(where)).find((f) => f.endsWith('.partial'));
      if (partial) {
        const { size } = await stat(join(where, partial));
        if (size > 0) return size;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return 0;
  }

  it('writes each chunk as it fills, then the rest, the join\'s changes and the end: the same rows as the table', async () => {
    const where = join(await dir, 'a', 'records');
    const path = join(where, '01-x.y.requests.gz');
    const rows = requests(2 * CHUNK_ROWS + 77);
    const table = new RequestTable();
    const stream = RecordsStream.open(path, table);
    for (const r of rows.slice(0, 2 * CHUNK_ROWS)) table.push(r);
    // Two chunks are full: they are on their way to the disk while the run goes on; no file is named yet.
    expect(await partialBytes(where)).toBeGreaterThan(0);
    expect(existsSync(path)).toBe(false);
    for (const r of rows.slice(2 * CHUNK_ROWS)) table.push(r);
    // The join, after the run: rows in written chunks and in the last one.
    table.refine(5, { pod: 'named-by-the-balancer', outcome: 'refused' });
    table.refine(CHUNK_ROWS + 1, { outcome: 'refused' });
    table.refine(2 * CHUNK_ROWS + 3, { pod: 'another-pod' });
    expect(await stream.finish()).toBe(rows.length);
    expect((await readdir(where)).filter((f) => f.endsWith('.partial'))).toEqual([]);
    const back = await readRecordsFile(path);
    expect(back.length).toBe(rows.length);
    expect(back.okCount).toBe(table.okCount);
    expect(back.at(5)).toMatchObject({ pod: 'named-by-the-balancer', outcome: 'refused' });
    expect(back.at(CHUNK_ROWS + 1).outcome).toBe('refused');
    expect(back.at(2 * CHUNK_ROWS + 3).pod).toBe('another-pod');
    expect(back.toArray()).toEqual(table.toArray());
    // The same bytes' meaning as a file written at the end.
    expect((await decodeRecords(await encodeRecords(table))).toArray()).toEqual(back.toArray());
  });

  it('leaves nothing when the run stops before it finishes (an abort, a harness error)', async () => {
    const where = join(await dir, 'b');
    const table = new RequestTable();
    {
      await using stream = RecordsStream.open(join(where, 'r.requests.gz'), table);
      for (const r of requests(CHUNK_ROWS + 5)) table.push(r);
      expect(stream.path).toBe(join(where, 'r.requests.gz'));
    }
    expect(await readdir(where)).toEqual([]);
    // The table is no longer watched: another stream may take it.
    await using again = RecordsStream.open(join(where, 's.requests.gz'), table);
    expect(await again.finish()).toBe(CHUNK_ROWS + 5);
    expect((await readRecordsFile(join(where, 's.requests.gz'))).toArray()).toEqual(table.toArray());
  });

  it('a forced exit (a second Ctrl-C skips every disposal) still removes the unfinished file', async () => {
    const where = join(await dir, 'c');
    const url = (f: string) => JSON.stringify(pathToFileURL(resolve(f)).href);
    const script = [
      `import { readdirSync } from 'node:fs';`,
      `import { RecordsStream } from ${url('src/report/records-file.ts')};`,
      `import { RequestTable } from ${url('src/model/request-table.ts')};`,
      `RecordsStream.open(${JSON.stringify(join(where, 'r.requests.gz'))}, new RequestTable());`,
      // The file is opened asynchronously: look once it is there, then exit as a second Ctrl-C does.
      `setTimeout(() => { console.log(readdirSync(${JSON.stringify(where)}).join(',')); process.exit(130); }, 200);`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status, child.stderr).toBe(130);
    expect(child.stdout.trim()).toMatch(/^r\.requests\.gz\.\d+\.partial$/);
    expect(await readdir(where)).toEqual([]);
  });

  it('says which file it could not write (a full disk), at finish, and names no file', async () => {
    const where = join(await dir, 'd');
    const path = join(where, 'r.requests.gz');
    // A directory where the partial file must go: opening it fails as a full disk's write would.
    await mkdir(`${path}.${process.pid}.partial`, { recursive: true });
    const table = new RequestTable();
    const stream = RecordsStream.open(path, table);
    for (const r of requests(CHUNK_ROWS + 1)) table.push(r);
    await expect(stream.finish()).rejects.toThrow(`cannot write ${path}: EISDIR`);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses a refinement of a row the file has not written', async () => {
    const t = RequestTable.from(requests(3));
    const raw = gunzipSync(await encodeRecords(t));
    const end = raw.subarray(raw.length - 9);
    const body = Buffer.from(JSON.stringify([[7, 'p', null]]), 'utf8');
    const head = Buffer.alloc(5);
    head[0] = 0x52;
    head.writeUInt32LE(body.length, 1);
    const bad = Buffer.concat([raw.subarray(0, raw.length - 9), head, body, end]);
    await expect(decodeRecords(gzipSync(bad), 'z.gz')).rejects.toThrow(/z\.gz .*refinement of row 7/);
  });
});

describe('RequestTable', () => {
  it('materialises only what filter keeps, and its rows are copies', () => {
    const t = RequestTable.from(requests(100));
    const failed = t.failed();
    expect(failed.every((r) => r.outcome !== 'ok')).toBe(true);
    expect(failed).toHaveLength(t.length - t.okCount);
    failed[0]!.outcome = 'ok';
    expect(t.failed()).toHaveLength(failed.length);
  });

  it('copy() refines apart from the original', () => {
    const t = RequestTable.from(requests(30));
    const c = t.copy();
    c.refine(3, { pod: 'other', outcome: 'ok' });
    expect(c.at(3)).toMatchObject({ pod: 'other', outcome: 'ok' });
    expect(t.at(3)).toEqual(requests(30)[3]);
    expect(c.okCount).toBe(t.okCount + 1);
  });

  it('names the field and the fix for an unknown outcome', () => {
    expect(() => new RequestTable().push({ id: 1, load: 'x', start: 0, end: 1, outcome: 'weird' as Outcome, newConnection: false })).toThrow(/unknown request outcome "weird"/);
  });
});
