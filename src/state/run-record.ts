// The state record of a run: what a `zerodrop run` process has started that could outlive it if it
// crashed (was SIGKILLed, ran out of memory, lost its machine's power). `zerodrop clean` reads these
// records to find and remove the leftovers (clean.ts).
//
// One JSON file per run, <stateDir>/runs/<id>.json, written before each thing it lists is started
// and rewritten as pods start. It is created whole (a temporary file renamed into place), then
// rewritten in place: one write at offset 0, padded with spaces to the longest record written so
// far, so that it never shrinks and a kill between two calls cannot leave it torn (JSON ends at its
// closing brace; the spaces after it are allowed). A rename over the old record, which ext4 follows
// with a flush of the new file's data, held the harness's event loop for up to 1.7 s on a busy disk
// (a netns cluster's etcd beside it: 9 of 1,630 over 100 ms); the write in place, 2.5 ms at most.
// A run that ends by itself, interrupted or not, has torn everything down and deletes its record.
// Each process is recorded with its start time (field 22 of /proc/<pid>/stat, clock ticks since
// boot; proc(5)) so that a process id the kernel has since given to another program is never taken
// for ours.

import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { timedBlockingCall } from './blocking-calls.ts';
import { onExit } from './exit-hooks.ts';
import { readProcStat, runningProcesses } from './proc-stat.ts';

/** A process as the kernel knows it: its id and when it started. */
export interface ProcessRef {
  pid: number;
  /** Field 22 (starttime) of /proc/<pid>/stat; undefined where there is no /proc. */
  startTime?: string;
}

export interface RunRecord {
  version: 1;
  id: string;
  startedAt: string;
  /** The `zerodrop run` process itself: while it lives, the run is not a leftover. */
  zerodrop: ProcessRef;
  /** Leaders of the process groups the run started (pods, preStop hooks, load generators). */
  groups: ProcessRef[];
  /** Temporary directories the run created and has not removed yet. */
  tempDirs: string[];
  /** Namespaces the run created on a cluster (the cluster part of `clean` finds them by label anyway). */
  namespaces: string[];
  /** kind clusters the run is creating or created, and has not deleted yet. */
  kindClusters: string[];
}

/** Where the records live: $ZERODROP_STATE_DIR, else $XDG_STATE_HOME/zerodrop, else ~/.local/state/zerodrop (XDG Base Directory spec). */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ZERODROP_STATE_DIR']) return env['ZERODROP_STATE_DIR'];
  const xdg = env['XDG_STATE_HOME'];
  // The spec ignores a relative XDG path.
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'state'), 'zerodrop');
}

export function runsDir(dir = stateDir()): string {
  return join(dir, 'runs');
}

/** The start time of `pid` from /proc, or undefined when it does not exist (or there is no /proc). */
export function processStartTime(pid: number): string | undefined {
  return readProcStat(pid)?.startTime;
}

export function processRef(pid: number): ProcessRef {
  const startTime = processStartTime(pid);
  return startTime === undefined ? { pid } : { pid, startTime };
}

/** True while the very process `ref` names runs (same id, same start time). */
export function sameProcessAlive(ref: ProcessRef): boolean {
  const now = processStartTime(ref.pid);
  if (now !== undefined) return ref.startTime === undefined || now === ref.startTime;
  try {
    process.kill(ref.pid, 0);
    return ref.startTime === undefined; // no /proc: all we can tell is that the id is in use
  } catch {
    return false;
  }
}

/**
 * What a provider reports to the run's record as it creates things that outlive a crash. Every
 * method is synchronous: the record is on disk before the call returns, so before the thing exists
 * for long.
 */
export interface LeftoverTracker {
  processGroupStarted(pid: number): void;
  /** The group is gone (a pod or a load driver that ended while the run goes on): no longer a leftover. */
  processGroupEnded(pid: number): void;
  tempDirCreated(path: string): void;
  tempDirRemoved(path: string): void;
  namespaceCreated(name: string): void;
  kindClusterCreating(name: string): void;
  kindClusterDeleted(name: string): void;
}

/** The record of the running `zerodrop run`, kept on disk until `close()`. */
export class RunRecordFile implements LeftoverTracker {
  readonly path: string;
  private readonly record: RunRecord;
  private closed = false;
  private warned = false;
  /** The record, open for its rewrites in place (after the first write). */
  private fd?: number;
  /** Bytes the file holds: each rewrite pads to this. */
  private size = 0;
  private dropExitHook?: () => void;

  private constructor(path: string, record: RunRecord) {
    this.path = path;
    this.record = record;
  }

  static create(dir = stateDir()): RunRecordFile {
    const runs = runsDir(dir);
    mkdirSync(runs, { recursive: true, mode: 0o700 });
    const id = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
    const file = new RunRecordFile(join(runs, `${id}.json`), {
      version: 1,
      id,
      startedAt: new Date().toISOString(),
      zerodrop: processRef(process.pid),
      groups: [],
      tempDirs: [],
      namespaces: [],
      kindClusters: [],
    });
    file.write();
    // Registered before any pod exists, so it runs after the providers' hooks (exit-hooks.ts).
    file.dropExitHook = onExit(() => file.closeIfNothingLeft());
    return file;
  }

  processGroupStarted(pid: number): void {
    this.update(() => {
      this.record.groups.push(processRef(pid));
    });
  }

  processGroupEnded(pid: number): void {
    this.update(() => {
      this.record.groups = this.record.groups.filter((g) => g.pid !== pid);
    });
  }

  tempDirCreated(path: string): void {
    this.update(() => {
      this.record.tempDirs.push(path);
    });
  }

  tempDirRemoved(path: string): void {
    this.update(() => {
      this.record.tempDirs = this.record.tempDirs.filter((d) => d !== path);
    });
  }

  namespaceCreated(name: string): void {
    this.update(() => {
      this.record.namespaces.push(name);
    });
  }

  kindClusterCreating(name: string): void {
    this.update(() => {
      this.record.kindClusters.push(name);
    });
  }

  kindClusterDeleted(name: string): void {
    this.update(() => {
      this.record.kindClusters = this.record.kindClusters.filter((c) => c !== name);
    });
  }

  /** The run is over and everything it started is gone: the record goes too. */
  close(): void {
    this.dropExitHook?.();
    this.closed = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.path, { force: true });
  }

  /**
   * As the process ends without its teardown (a signal, a crash), after the providers' exit hooks
   * have SIGKILLed their pods and removed their directories: the record goes if nothing it lists
   * is left, and stays for `zerodrop clean` otherwise (a namespace on a cluster always stays).
   */
  private closeIfNothingLeft(): void {
    if (this.closed || this.record.namespaces.length > 0 || this.record.kindClusters.length > 0) return;
    if (this.record.tempDirs.some((dir) => existsSync(dir))) return;
    if (this.record.groups.length === 0) return this.close();
    // The providers' hooks waited for the groups they killed; zombies count as gone.
    const running = runningProcesses();
    if (running !== undefined && !running.some((stat) => this.record.groups.some((g) => g.pid === stat.pgrp))) this.close();
  }

  private write(): void {
    timedBlockingCall('writing the run\'s state record (a disk busy with other writes can hold it)', () => this.writeNow());
  }

  private writeNow(): void {
    if (this.closed) return;
    const text = Buffer.from(`${JSON.stringify(this.record, null, 2)}\n`);
    if (this.fd === undefined) {
      const tmp = `${this.path}.tmp`;
      writeFileSync(tmp, text, { mode: 0o600 });
      renameSync(tmp, this.path);
      this.fd = openSync(this.path, 'r+');
      this.size = text.length;
      return;
    }
    const padded = text.length >= this.size ? text : Buffer.concat([text, Buffer.alloc(this.size - text.length, ' ')]);
    writeSync(this.fd, padded, 0, padded.length, 0);
    this.size = padded.length;
  }

  /** Later updates run inside the provider's event handlers: a full disk must not take the run down. */
  private update(change: () => void): void {
    change();
    try {
      this.write();
    } catch (error) {
      if (!this.warned) console.error(`zerodrop: could not update the state record ${this.path}: ${(error as Error).message}`);
      this.warned = true;
    }
  }
}

/** Every record in `dir`, with the file it came from; unreadable files are reported, not thrown. */
export function readRunRecords(dir = stateDir()): { records: { path: string; record: RunRecord }[]; unreadable: string[] } {
  const runs = runsDir(dir);
  let names: string[];
  try {
    names = readdirSync(runs);
  } catch {
    return { records: [], unreadable: [] };
  }
  const records: { path: string; record: RunRecord }[] = [];
  const unreadable: string[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const path = join(runs, name);
    try {
      const record = JSON.parse(readFileSync(path, 'utf8')) as RunRecord;
      if (record.version !== 1 || typeof record.zerodrop?.pid !== 'number') throw new Error('not a zerodrop run record');
      records.push({ path, record: { ...record, groups: record.groups ?? [], tempDirs: record.tempDirs ?? [], namespaces: record.namespaces ?? [], kindClusters: record.kindClusters ?? [] } });
    } catch {
      unreadable.push(path);
    }
  }
  return { records, unreadable };
}
