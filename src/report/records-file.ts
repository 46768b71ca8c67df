// The records files: every request of one scenario x profile, column by column, gzip'd, and every
// connection the balancers routed, a JSON line each, gzip'd; beside results.json (docs/reports.md "The records file"). The one reader and writer of the format: the
// report, the assertions (through the Timeline it revives) and `zerodrop report` all read it here.
//
// Format (little-endian), inside one gzip stream:
//   magic "ZDRREQ1\n"
//   frames: type (1 byte), payload length (u32), payload
//     'N' names: a JSON array of strings appended to the name table (index 0 is undefined)
//     'C' chunk: rows (u32), then each column of src/model/request-table.ts numberColumns() in
//         order, `rows` elements each
//     'R' refinements (format 2): a JSON array of [row, pod or null, outcome or null], what the
//         join (src/observe/join.ts) changed in rows written before it
//     'E' end: total rows (u32); a file without it was cut short
// A chunk refers only to names written before it, so a writer may append as rows arrive: a run's
// RecordsStream writes each chunk as it fills.

import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { endianness } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { CHUNK_ROWS, newChunk, numberColumns, RequestTable, type TableWatcher } from '../model/request-table.ts';
import type { ConnectionRecord, Outcome } from '../model/timeline.ts';

/** The format written; 2 added the 'R' frame. */
export const RECORDS_FORMAT = 'zerodrop-requests/2';
/** The formats read: a format-1 file is a format-2 file without refinements. */
export const RECORDS_FORMATS_READ: readonly string[] = ['zerodrop-requests/1', RECORDS_FORMAT];
const MAGIC = Buffer.from('ZDRREQ1\n', 'latin1');
const NAMES = 0x4e;
const CHUNK = 0x43;
const END = 0x45;
const REFINED = 0x52;

function frame(type: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = type;
  head.writeUInt32LE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function checkEndianness(): void {
  // Typed arrays are written as the machine holds them; every platform Node.js ships for is little-endian.
  if (endianness() !== 'LE') throw new Error('the records file is little-endian; this machine is not');
}

/** Writes a table's frames in order, remembering which names the file holds already. */
class FrameWriter {
  private namesWritten = 1;
  private readonly table: RequestTable;
  constructor(table: RequestTable) {
    checkEndianness();
    this.table = table;
  }

  /** The names frame for names interned since the last one, if any. */
  private newNames(): Buffer[] {
    const names = this.table.internedNames;
    if (names.length <= this.namesWritten) return [];
    const out = frame(NAMES, Buffer.from(JSON.stringify(names.slice(this.namesWritten)), 'utf8'));
    this.namesWritten = names.length;
    return [out];
  }

  /** Chunk `k` (copied: the table may change it later) with the names it needs before it. */
  chunk(k: number): Buffer[] {
    const part = this.table.chunkAt(k);
    if (!part) return [];
    const parts = [u32(part.rows)];
    for (const col of numberColumns(part.chunk)) parts.push(Buffer.from(col.buffer, col.byteOffset, part.rows * col.BYTES_PER_ELEMENT));
    // Names interned after this chunk was filled (a join's pod) are written with it: cheap, and correct.
    return [...this.newNames(), frame(CHUNK, Buffer.concat(parts))];
  }

  /** What rows already written read now (the join's changes), then the end. */
  end(refinedRows: Iterable<number> = []): Buffer[] {
    const refined: [number, string | null, Outcome | null][] = [];
    for (const i of refinedRows) {
      const row = this.table.row(i);
      refined.push([i, row.pod ?? null, row.outcome]);
    }
    const out = this.newNames();
    if (refined.length > 0) out.push(frame(REFINED, Buffer.from(JSON.stringify(refined), 'utf8')));
    out.push(frame(END, u32(this.table.length)));
    return out;
  }
}

/** The frames of `table`, one chunk at a time. */
function* framesOf(table: RequestTable): Generator<Buffer> {
  const writer = new FrameWriter(table);
  yield MAGIC;
  for (let k = 0; table.chunkAt(k); k++) yield* writer.chunk(k);
  yield* writer.end();
}

/** Writes `table` to `path` (gzip'd), a chunk at a time. */
export async function writeRecordsFile(path: string, table: RequestTable): Promise<void> {
  await pipeline(Readable.from(framesOf(table)), createGzip({ level: 6 }), createWriteStream(path));
}

/** The bytes of a records file for `table` (tests, and where a file is not wanted). */
export async function encodeRecords(table: RequestTable): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(Readable.from(framesOf(table)), createGzip({ level: 6 }), async (source: AsyncIterable<Buffer>) => {
    for await (const b of source) parts.push(b);
  });
  return Buffer.concat(parts);
}

/** Reads a records file back into a table; throws, naming the file, when it is not one or was cut short. */
export async function readRecordsFile(path: string): Promise<RequestTable> {
  // Opened first, so that a missing file is an error here rather than a stream that never ends.
  const file = await open(path);
  try {
    return await decodeFrom(file.createReadStream({ autoClose: false }).pipe(createGunzip()), path);
  } finally {
    await file.close();
  }
}

export async function decodeRecords(bytes: Buffer, what = 'records'): Promise<RequestTable> {
  return decodeFrom(Readable.from([bytes]).pipe(createGunzip()), what);
}

async function decodeFrom(source: AsyncIterable<Buffer>, what: string): Promise<RequestTable> {
  checkEndianness();
  const table = new RequestTable();
  let pending = Buffer.alloc(0);
  let sawMagic = false;
  let ended: number | undefined;
  const bad = (why: string) => new Error(`${what} is not a zerodrop records file (${RECORDS_FORMAT}): ${why}`);
  for await (const data of source) {
    pending = pending.length === 0 ? Buffer.from(data) : Buffer.concat([pending, data]);
    if (!sawMagic) {
      if (pending.length < MAGIC.length) continue;
      if (!pending.subarray(0, MAGIC.length).equals(MAGIC)) throw bad('wrong header');
      pending = pending.subarray(MAGIC.length);
      sawMagic = true;
    }
    while (pending.length >= 5) {
      const length = pending.readUInt32LE(1);
      if (pending.length < 5 + length) break;
      const type = pending[0];
      const payload = pending.subarray(5, 5 + length);
      pending = pending.subarray(5 + length);
      if (ended !== undefined) throw bad('data after its end');
      if (type === NAMES) {
        for (const name of JSON.parse(payload.toString('utf8')) as string[]) table.intern(name);
      } else if (type === CHUNK) {
        const rows = payload.readUInt32LE(0);
        if (rows > CHUNK_ROWS) throw bad(`a chunk of ${rows} rows`);
        const chunk = newChunk();
        let at = 4;
        for (const col of numberColumns(chunk)) {
          const n = rows * col.BYTES_PER_ELEMENT;
          if (at + n > payload.length) throw bad('a chunk shorter than its rows');
          new Uint8Array(col.buffer, col.byteOffset, n).set(payload.subarray(at, at + n));
          at += n;
        }
        table.appendChunk(chunk, rows);
      } else if (type === REFINED) {
        for (const entry of JSON.parse(payload.toString('utf8')) as unknown[]) {
          const [row, pod, outcome] = Array.isArray(entry) ? (entry as unknown[]) : [];
          if (typeof row !== 'number' || !Number.isInteger(row) || row < 0 || row >= table.length) throw bad(`a refinement of row ${String(row)}, not written before it`);
          try {
            table.refine(row, { ...(typeof pod === 'string' ? { pod } : {}), ...(typeof outcome === 'string' ? { outcome: outcome as Outcome } : {}) });
          } catch (error) {
            throw bad((error as Error).message);
          }
        }
      } else if (type === END) {
        ended = payload.readUInt32LE(0);
      } else {
        throw bad(`unknown frame ${String(type)}`);
      }
    }
  }
  if (!sawMagic) throw bad('wrong header');
  if (ended === undefined || pending.length > 0) throw bad('cut short');
  if (ended !== table.length) throw bad(`${table.length} rows where its end says ${ended}`);
  return table;
}

/** The .partial files of the streams not finished yet: a forced exit (a second Ctrl-C) skips their disposal. */
const unfinished = new Set<string>();
let exitHook = false;
function removeUnfinishedAtExit(path: string): void {
  unfinished.add(path);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const p of unfinished) rmSync(p, { force: true });
  });
}

/**
 * The records file of a table that is still filling (a run's requests): each chunk goes to disk as it
 * fills, so a long run's records are written as it goes rather than all at its end. `finish()` adds
 * the last rows, what the join changed in rows already written (an 'R' frame) and the end, then
 * gives the file its name; until then it is PATH.PID.partial, and disposing a stream that did not
 * finish (an abort, a harness error) removes it.
 */
export class RecordsStream implements AsyncDisposable, TableWatcher {
  /** The file's name once finished. */
  readonly path: string;
  private readonly table: RequestTable;
  private readonly partial: string;
  private readonly frames: FrameWriter;
  private readonly gzip = createGzip({ level: 6 });
  private readonly done: Promise<void>;
  private failure: Error | undefined;
  private written = 0;
  private readonly refinedRows = new Set<number>();
  private state: 'open' | 'finished' | 'disposed' = 'open';

  /** Starts `path` for `table`, writing the chunks it has filled already. */
  static open(path: string, table: RequestTable): RecordsStream {
    return new RecordsStream(path, table);
  }

  private constructor(path: string, table: RequestTable) {
    this.path = path;
    this.table = table;
    this.frames = new FrameWriter(table);
    this.partial = `${path}.${process.pid}.partial`;
    mkdirSync(dirname(path), { recursive: true });
    removeUnfinishedAtExit(this.partial);
    // A write error (a full disk) is kept for finish(); the run it records goes on.
    this.done = pipeline(this.gzip, createWriteStream(this.partial)).catch((error: unknown) => {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    });
    this.gzip.write(MAGIC);
    for (let k = 0; (table.chunkAt(k)?.rows ?? 0) === CHUNK_ROWS; k++) this.filled(k);
    table.watch(this);
  }

  /** @internal the table's chunk `k` is full. */
  filled(k: number): void {
    // After a write error nothing more is written: finish() reports it.
    if (k !== this.written || this.failure) return;
    for (const b of this.frames.chunk(k)) this.gzip.write(b);
    this.written = k + 1;
  }

  /** @internal the join changed row `i`; a row not yet written goes out as it reads at the end. */
  refined(i: number): void {
    if (i < this.written * CHUNK_ROWS) this.refinedRows.add(i);
  }

  /** Writes the rest and the end, names the file; returns how many requests it holds. */
  async finish(): Promise<number> {
    if (this.state !== 'open') throw new Error(`the records stream of ${this.path} is ${this.state}`);
    this.state = 'finished';
    this.table.watch(undefined);
    for (let k = this.written; this.table.chunkAt(k); k++) for (const b of this.frames.chunk(k)) this.gzip.write(b);
    for (const b of this.frames.end([...this.refinedRows].sort((a, b) => a - b))) this.gzip.write(b);
    this.gzip.end();
    await this.done;
    try {
      if (this.failure) {
        // The write error is the news; a partial file that cannot be removed either must not hide it.
        await rm(this.partial, { force: true }).catch(() => undefined);
        throw new Error(`cannot write ${this.path}: ${this.failure.message}`, { cause: this.failure });
      }
      await rename(this.partial, this.path);
    } finally {
      unfinished.delete(this.partial);
    }
    return this.table.length;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'disposed';
    this.table.watch(undefined);
    this.gzip.destroy();
    await this.done;
    await rm(this.partial, { force: true });
    unfinished.delete(this.partial);
  }
}

/**
 * The balancer's connection records, one JSON object a line, gzip'd: a gateway opens a connection
 * to a backend per request, so a run holds about as many of these as requests. Written in chunks.
 */
export async function writeConnectionsFile(path: string, connections: readonly ConnectionRecord[]): Promise<void> {
  function* lines(): Generator<string> {
    const size = 4096;
    for (let i = 0; i < connections.length; i += size) {
      yield connections
        .slice(i, i + size)
        .map((c) => `${JSON.stringify(c)}\n`)
        .join('');
    }
  }
  await pipeline(Readable.from(lines()), createGzip({ level: 6 }), createWriteStream(path));
}

/** Reads a connections file back; throws, naming the file, on a line that is not a connection. */
export async function readConnectionsFile(path: string): Promise<ConnectionRecord[]> {
  const file = await open(path);
  try {
    const out: ConnectionRecord[] = [];
    let rest = '';
    let line = 0;
    const take = (text: string) => {
      line++;
      const c = JSON.parse(text) as Partial<ConnectionRecord>;
      if (typeof c.id !== 'number' || typeof c.clientPort !== 'number' || typeof c.open !== 'number') {
        throw new Error(`${path} line ${line} is not a connection record`);
      }
      out.push(c as ConnectionRecord);
    };
    for await (const data of file.createReadStream({ autoClose: false }).pipe(createGunzip())) {
      const text = rest + (data as Buffer).toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p !== '') take(p);
    }
    if (rest !== '') take(rest);
    return out;
  } finally {
    await file.close();
  }
}
