// One container's log, kept as the kubelet keeps it: a file per container start, in the CRI log
// format (`<RFC3339Nano time> <stdout|stderr> F <line>`, one line each,
// https://github.com/kubernetes/design-proposals-archive/blob/main/node/kubelet-cri-logging.md), the
// current start's and the one before it (what `kubectl logs --previous` reads); older ones are
// removed, as the kubelet keeps only the last terminated instance of a container.
//
// Lines are written from the agent's event loop (batched per turn, flushed before any read), and a
// follower subscribes in the same tick as it reads the file, so a follow neither loses nor repeats a line.

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface LogLine {
  /** Nanoseconds since the epoch. */
  nanos: bigint;
  stream: 'stdout' | 'stderr';
  text: string;
}

export type Follower = { line(l: LogLine): void; end(): void };

const origin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Wall-clock nanoseconds (the clock of the log timestamps). */
export function nowNanos(): bigint {
  return origin + process.hrtime.bigint();
}

/** RFC3339Nano as Go formats it: trailing zeros of the fraction trimmed. */
export function formatNanos(nanos: bigint): string {
  const ms = Number(nanos / 1_000_000n);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (nanos % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${base}${frac ? `.${frac}` : ''}Z`;
}

/** RFC3339 / RFC3339Nano to nanoseconds; undefined when it is not one. */
export function parseTimestamp(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!m) return undefined;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return undefined;
  return BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

export function parseCriLine(raw: string): LogLine | undefined {
  const a = raw.indexOf(' ');
  const b = raw.indexOf(' ', a + 1);
  const c = raw.indexOf(' ', b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  const nanos = parseTimestamp(raw.slice(0, a));
  const stream = raw.slice(a + 1, b);
  if (nanos === undefined || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  return { nanos, stream, text: raw.slice(c + 1) };
}

interface Attempt {
  file: string;
  fd?: number;
  ended: boolean;
  followers: Set<Follower>;
  /** Lines not yet written to the file: written together once per event-loop turn. */
  pending: string[];
}

export class ContainerLog {
  private readonly dir: string;
  private current?: Attempt;
  private previous?: Attempt;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }

  /** A new start of the container (restartCount `n`): the current log becomes the previous one. */
  begin(n: number): void {
    this.end();
    if (this.previous) rmSync(this.previous.file, { force: true });
    this.previous = this.current;
    const file = path.join(this.dir, `${n}.log`);
    this.current = { file, fd: openSync(file, 'w'), ended: false, followers: new Set(), pending: [] };
  }

  write(stream: 'stdout' | 'stderr', text: string, nanos: bigint = nowNanos()): void {
    const attempt = this.current;
    if (attempt?.fd === undefined) return;
    attempt.pending.push(`${formatNanos(nanos)} ${stream} F ${text}\n`);
    if (attempt.pending.length === 1) setImmediate(() => this.flush(attempt));
    const line: LogLine = { nanos, stream, text };
    for (const f of attempt.followers) f.line(line);
  }

  /** Writes the lines of this turn in one write (a chatty container costs one syscall per turn, not per line). */
  private flush(attempt: Attempt): void {
    if (attempt.fd === undefined || attempt.pending.length === 0) return;
    writeSync(attempt.fd, attempt.pending.join(''));
    attempt.pending.length = 0;
  }

  /** The container exited: followers of this start end. */
  end(): void {
    const attempt = this.current;
    if (!attempt || attempt.ended) return;
    this.flush(attempt);
    attempt.ended = true;
    if (attempt.fd !== undefined) closeSync(attempt.fd);
    attempt.fd = undefined;
    for (const f of attempt.followers) f.end();
    attempt.followers.clear();
  }

  get hasPrevious(): boolean {
    return this.previous !== undefined;
  }

  get started(): boolean {
    return this.current !== undefined;
  }

  /**
   * The lines of the current (or previous) start; with `follower`, subscribes it to the lines to come
   * (and ends it at once when that start has ended). Returns undefined when there is no such start.
   */
  read(previous: boolean, follower?: Follower): LogLine[] | undefined {
    const attempt = previous ? this.previous : this.current;
    if (!attempt) return undefined;
    // Lines already given to followers must be in what a new reader reads.
    this.flush(attempt);
    let text = '';
    try {
      text = readFileSync(attempt.file, 'utf8');
    } catch {
      // removed: nothing to read
    }
    const lines: LogLine[] = [];
    for (const raw of text.split('\n')) {
      const line = raw ? parseCriLine(raw) : undefined;
      if (line) lines.push(line);
    }
    if (follower) {
      if (attempt.ended || previous) queueMicrotask(() => follower.end());
      else attempt.followers.add(follower);
    }
    return lines;
  }

  unfollow(follower: Follower): void {
    this.current?.followers.delete(follower);
  }

  /** Closes and removes every file. */
  remove(): void {
    this.end();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
