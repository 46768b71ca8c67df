// The requests of a run, stored by column: a run at 5,000 requests/s for 300 s records 1.5 million of
// them, and one object each (about 4 KB with its strings and the garbage collector's share) does not
// fit a CI runner. Each field is a typed array grown in chunks of CHUNK_ROWS rows; the strings (load,
// path, service, pods, errors) are interned, so a row costs about 66 bytes. Plain data, no I/O: the
// records file (src/report/records-file.ts) writes and reads this shape.

import type { Outcome, RequestRecord } from './timeline.ts';

/** Rows per chunk: every column grows by this many rows at a time. A power of two (row >>> SHIFT). */
export const CHUNK_SHIFT = 14;
export const CHUNK_ROWS = 1 << CHUNK_SHIFT;
const MASK = CHUNK_ROWS - 1;

/** Outcome classes by code; the code is the index. Append only: the records file stores codes. */
export const OUTCOMES: readonly Outcome[] = ['ok', 'status', 'refused', 'reset', 'timeout', 'eof', 'goaway', 'lost', 'out-of-order', 'duplicate', 'error'];
const OUTCOME_CODE = new Map<Outcome, number>(OUTCOMES.map((o, i) => [o, i]));

/** Bits of the `flags` column: newConnection, direct, and whether each optional number is present. */
export const FLAG_NEW_CONNECTION = 1;
export const FLAG_STATUS = 2;
export const FLAG_LOCAL_PORT = 4;
export const FLAG_STREAM_ID = 8;
export const FLAG_CONNECTION_START = 16;
/** RequestRecord.direct: sent straight to its pod, past the Service's balancer. */
export const FLAG_DIRECT = 32;

/** The string fields, each stored as an index into the table's names (0: undefined). */
export const STRING_FIELDS = ['load', 'path', 'service', 'pod', 'gateway', 'backendPod', 'error'] as const;
export type StringField = (typeof STRING_FIELDS)[number];

type NumberArray = Float64Array | Uint32Array | Uint16Array | Uint8Array;

/** One chunk of every column. */
export interface Chunk {
  id: Uint32Array;
  start: Float64Array;
  end: Float64Array;
  connectionStart: Float64Array;
  outcome: Uint8Array;
  flags: Uint8Array;
  status: Uint16Array;
  localPort: Uint16Array;
  streamId: Uint32Array;
  strings: Record<StringField, Uint32Array>;
}

export function newChunk(): Chunk {
  const strings = {} as Record<StringField, Uint32Array>;
  for (const f of STRING_FIELDS) strings[f] = new Uint32Array(CHUNK_ROWS);
  return {
    id: new Uint32Array(CHUNK_ROWS),
    start: new Float64Array(CHUNK_ROWS),
    end: new Float64Array(CHUNK_ROWS),
    connectionStart: new Float64Array(CHUNK_ROWS),
    outcome: new Uint8Array(CHUNK_ROWS),
    flags: new Uint8Array(CHUNK_ROWS),
    status: new Uint16Array(CHUNK_ROWS),
    localPort: new Uint16Array(CHUNK_ROWS),
    streamId: new Uint32Array(CHUNK_ROWS),
    strings,
  };
}

/** The numeric columns of a chunk in the records file's order, with their element sizes. */
export function numberColumns(c: Chunk): NumberArray[] {
  return [c.id, c.start, c.end, c.connectionStart, c.outcome, c.flags, c.status, c.localPort, c.streamId, ...STRING_FIELDS.map((f) => c.strings[f])];
}

/**
 * A read-only view of one row, reused from row to row by `scan`: read it in the callback, never keep
 * it (`at(i)` gives a record to keep).
 */
export class RequestView {
  private c!: Chunk;
  private o = 0;
  /** Row index in the table. */
  i = 0;
  private readonly table: RequestTable;
  constructor(table: RequestTable) {
    this.table = table;
  }

  /** @internal */
  moveTo(i: number, chunk: Chunk): this {
    this.i = i;
    this.c = chunk;
    this.o = i & MASK;
    return this;
  }
  get id(): number {
    return this.c.id[this.o] as number;
  }
  get start(): number {
    return this.c.start[this.o] as number;
  }
  get end(): number {
    return this.c.end[this.o] as number;
  }
  get outcome(): Outcome {
    return OUTCOMES[this.c.outcome[this.o] as number] as Outcome;
  }
  get ok(): boolean {
    return this.c.outcome[this.o] === 0;
  }
  get newConnection(): boolean {
    return ((this.c.flags[this.o] as number) & FLAG_NEW_CONNECTION) !== 0;
  }
  get status(): number | undefined {
    return ((this.c.flags[this.o] as number) & FLAG_STATUS) !== 0 ? (this.c.status[this.o] as number) : undefined;
  }
  get localPort(): number | undefined {
    return ((this.c.flags[this.o] as number) & FLAG_LOCAL_PORT) !== 0 ? (this.c.localPort[this.o] as number) : undefined;
  }
  get streamId(): number | undefined {
    return ((this.c.flags[this.o] as number) & FLAG_STREAM_ID) !== 0 ? (this.c.streamId[this.o] as number) : undefined;
  }
  get direct(): true | undefined {
    return ((this.c.flags[this.o] as number) & FLAG_DIRECT) !== 0 ? true : undefined;
  }
  get connectionStart(): number | undefined {
    return ((this.c.flags[this.o] as number) & FLAG_CONNECTION_START) !== 0 ? (this.c.connectionStart[this.o] as number) : undefined;
  }
  private str(f: StringField): string | undefined {
    return this.table.nameOf(this.c.strings[f][this.o] as number);
  }
  get load(): string {
    return this.str('load') ?? '';
  }
  get path(): string | undefined {
    return this.str('path');
  }
  get service(): string | undefined {
    return this.str('service');
  }
  get pod(): string | undefined {
    return this.str('pod');
  }
  get gateway(): string | undefined {
    return this.str('gateway');
  }
  get backendPod(): string | undefined {
    return this.str('backendPod');
  }
  get error(): string | undefined {
    return this.str('error');
  }
  /** The row as a record of its own, to keep. */
  record(): RequestRecord {
    return this.table.at(this.i);
  }
}

/** What `scan` hands its callback: the fields of RequestRecord, read from the columns. */
export type RequestRow = Readonly<RequestRecord> & { readonly i: number; readonly ok: boolean; record(): RequestRecord };

/** Who is told of a table's full chunks and refined rows (see RequestTable.watch). */
export interface TableWatcher {
  filled(chunk: number): void;
  refined(row: number): void;
}

export class RequestTable implements Iterable<RequestRecord> {
  private readonly chunks: Chunk[] = [];
  private rows = 0;
  private oks = 0;
  /** Interned strings; index 0 stands for undefined. */
  private readonly names: string[] = [''];
  private readonly nameIds = new Map<string, number>();
  #view: RequestView | undefined;
  #watcher: TableWatcher | undefined;

  static from(records: Iterable<RequestRecord>): RequestTable {
    const table = new RequestTable();
    for (const r of records) table.push(r);
    return table;
  }

  get length(): number {
    return this.rows;
  }

  /** How many rows are ok, kept as rows arrive (live progress reads it every tick). */
  get okCount(): number {
    return this.oks;
  }

  /** Interned strings, in order of first use (index 0 is the empty placeholder for undefined). */
  get internedNames(): readonly string[] {
    return this.names;
  }

  nameOf(id: number): string | undefined {
    return id === 0 ? undefined : this.names[id];
  }

  /** The index of `name`, adding it when new; 0 for undefined. */
  intern(name: string | undefined): number {
    if (name === undefined) return 0;
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.nameIds.set(name, id);
    }
    return id;
  }

  push(r: RequestRecord): void {
    const i = this.rows;
    const o = i & MASK;
    let chunk = this.chunks[i >>> CHUNK_SHIFT];
    if (!chunk) {
      chunk = newChunk();
      this.chunks.push(chunk);
    }
    chunk.id[o] = r.id;
    chunk.start[o] = r.start;
    chunk.end[o] = r.end;
    chunk.outcome[o] = outcomeCode(r.outcome);
    if (r.outcome === 'ok') this.oks++;
    let flags = (r.newConnection ? FLAG_NEW_CONNECTION : 0) | (r.direct ? FLAG_DIRECT : 0);
    if (r.status !== undefined) {
      flags |= FLAG_STATUS;
      chunk.status[o] = r.status;
    }
    if (r.localPort !== undefined) {
      flags |= FLAG_LOCAL_PORT;
      chunk.localPort[o] = r.localPort;
    }
    if (r.streamId !== undefined) {
      flags |= FLAG_STREAM_ID;
      chunk.streamId[o] = r.streamId;
    }
    if (r.connectionStart !== undefined) {
      flags |= FLAG_CONNECTION_START;
      chunk.connectionStart[o] = r.connectionStart;
    }
    chunk.flags[o] = flags;
    for (const f of STRING_FIELDS) chunk.strings[f][o] = this.intern(r[f]);
    this.rows = i + 1;
    if (o === MASK) this.#watcher?.filled(i >>> CHUNK_SHIFT);
  }

  /**
   * Tells `watcher` of each chunk as it fills and of each row `refine` changes: the records file is
   * written as the run goes (src/report/records-file.ts RecordsStream). One watcher at a time.
   */
  watch(watcher: TableWatcher | undefined): void {
    if (watcher && this.#watcher) throw new Error('this request table is already watched');
    this.#watcher = watcher;
  }

  /** Row `i` as a record of its own (a copy: changing it changes nothing here; see `refine`). */
  at(i: number): RequestRecord {
    const v = this.row(i);
    const r: RequestRecord = { id: v.id, load: v.load, start: v.start, end: v.end, outcome: v.outcome, newConnection: v.newConnection };
    const set = <K extends keyof RequestRecord>(k: K, value: RequestRecord[K] | undefined) => {
      if (value !== undefined) r[k] = value;
    };
    set('status', v.status);
    set('pod', v.pod);
    set('localPort', v.localPort);
    set('connectionStart', v.connectionStart);
    set('path', v.path);
    set('error', v.error);
    set('service', v.service);
    set('gateway', v.gateway);
    set('backendPod', v.backendPod);
    set('streamId', v.streamId);
    set('direct', v.direct);
    return r;
  }

  /** The shared view positioned on row `i`. */
  row(i: number): RequestRow {
    if (i < 0 || i >= this.rows) throw new RangeError(`request row ${i} is outside 0..${this.rows - 1}`);
    this.#view ??= new RequestView(this);
    return this.#view.moveTo(i, this.chunks[i >>> CHUNK_SHIFT] as Chunk) as unknown as RequestRow;
  }

  /** Calls `fn` with a view of each row in order, allocating nothing per row. */
  scan(fn: (r: RequestRow) => void): void {
    const view = new RequestView(this);
    for (let i = 0; i < this.rows; i++) fn(view.moveTo(i, this.chunks[i >>> CHUNK_SHIFT] as Chunk) as unknown as RequestRow);
  }

  /** The rows `keep` selects, each as a record of its own; the others are never made into objects. */
  filter(keep: (r: RequestRow) => boolean): RequestRecord[] {
    const out: RequestRecord[] = [];
    this.scan((r) => {
      if (keep(r)) out.push(this.at(r.i));
    });
    return out;
  }

  count(match: (r: RequestRow) => boolean): number {
    let n = 0;
    this.scan((r) => {
      if (match(r)) n++;
    });
    return n;
  }

  some(match: (r: RequestRow) => boolean): boolean {
    for (let i = 0; i < this.rows; i++) if (match(this.row(i))) return true;
    return false;
  }

  every(match: (r: RequestRow) => boolean): boolean {
    return !this.some((r) => !match(r));
  }

  map<T>(fn: (r: RequestRow) => T): T[] {
    const out: T[] = [];
    this.scan((r) => out.push(fn(r)));
    return out;
  }

  /** Every failed request (outcome other than ok), in row order. */
  failed(): RequestRecord[] {
    return this.filter((r) => !r.ok);
  }

  /** Records of their own, one at a time: for code that keeps what it reads. */
  *[Symbol.iterator](): Iterator<RequestRecord> {
    for (let i = 0; i < this.rows; i++) yield this.at(i);
  }

  /** Every row as an object: the old in-memory shape, for comparison and for small tests only. */
  toArray(): RequestRecord[] {
    return [...this];
  }

  /** What the balancer's records add to row `i` (src/observe/join.ts). */
  refine(i: number, fields: { pod?: string; outcome?: Outcome }): void {
    const chunk = this.chunks[i >>> CHUNK_SHIFT];
    if (!chunk || i >= this.rows) throw new RangeError(`request row ${i} is outside 0..${this.rows - 1}`);
    if (fields.pod !== undefined) chunk.strings.pod[i & MASK] = this.intern(fields.pod);
    if (fields.outcome !== undefined) {
      const code = outcomeCode(fields.outcome);
      this.oks += (code === 0 ? 1 : 0) - (chunk.outcome[i & MASK] === 0 ? 1 : 0);
      chunk.outcome[i & MASK] = code;
    }
    this.#watcher?.refined(i);
  }

  /** A table sharing this one's rows, whose `refine` leaves this one as it is (the columns it changes are copied). */
  copy(): RequestTable {
    const table = new RequestTable();
    for (const name of this.names.slice(1)) table.intern(name);
    for (const c of this.chunks) {
      table.chunks.push({ ...c, outcome: c.outcome.slice(), strings: { ...c.strings, pod: c.strings.pod.slice() } });
    }
    table.rows = this.rows;
    table.oks = this.oks;
    return table;
  }

  /** JSON holds the failed requests in full; the records file holds them all (docs/reports.md). */
  toJSON(): RequestRecord[] {
    return this.failed();
  }

  /** Bytes the columns hold (allocated chunks and interned strings), for the bench. */
  bytes(): number {
    let n = 0;
    for (const c of this.chunks) for (const col of numberColumns(c)) n += col.byteLength;
    for (const name of this.names) n += 2 * name.length + 16;
    return n;
  }

  /** @internal the records file's reader appends whole chunks. */
  appendChunk(chunk: Chunk, rows: number): void {
    if (this.rows & MASK) throw new Error('appendChunk after a partial chunk');
    this.chunks.push(chunk);
    this.rows += rows;
    for (let o = 0; o < rows; o++) if (chunk.outcome[o] === 0) this.oks++;
  }

  /** @internal the records file's writer reads whole chunks. */
  chunkAt(k: number): { chunk: Chunk; rows: number } | undefined {
    const chunk = this.chunks[k];
    if (!chunk) return undefined;
    return { chunk, rows: Math.min(CHUNK_ROWS, this.rows - k * CHUNK_ROWS) };
  }
}

function outcomeCode(outcome: Outcome): number {
  const code = OUTCOME_CODE.get(outcome);
  if (code === undefined) throw new Error(`unknown request outcome "${String(outcome)}"`);
  return code;
}
