// The processes inside one pod's container over time: a reload replaces a gateway's workers (nginx,
// HAProxy's master-worker) while the pod and its main process stay, so the pod's lifecycle alone
// cannot say which process a failure met. Every few ms the main process's descendants are listed
// from /proc (its children's children too), and each one's appearance and end is recorded
// (process-started, process-exited) with its pid, parent and command line: the old workers'
// lifetimes and the new ones' on the Timeline, as a pod's. Linux only; elsewhere nothing is recorded.
// A look reads /proc off the event loop (proc-stat.ts says why) and gathers everything before it
// records anything, so a look is never half applied; one look at a time.

import { childrenOf, readCommandLine, readProcStatAsync, runs } from '../../state/proc-stat.ts';

/** Once the pod reloads: often enough to place a worker's start and end within a request's duration. */
export const PROCESS_POLL_MS = 20;
/**
 * Until then only the processes that are there matter, not to the millisecond: every pod of a
 * profile that can reload is watched, in every scenario, and the harness's event loop pays for it.
 */
export const PROCESS_IDLE_POLL_MS = 100;
/** Looks a new process may keep its parent's command line before it is recorded under it (a worker forked, never renamed). */
const NAMING_LOOKS = 5;

interface Seen {
  ppid: number;
  command: string;
  /**
   * When it was first seen; its process-started is recorded with this time once it has a name of
   * its own (a fork still carries its parent's command line until it execs or renames itself, later
   * on a busy machine), or after NAMING_LOOKS looks, or at its end.
   */
  since: number;
  recorded: boolean;
  looks: number;
  parentCommand: string;
}

type RecordProcess = (kind: 'process-started' | 'process-exited', detail: { [key: string]: unknown }, t?: number) => void;

export class ProcessWatch {
  private readonly seen = new Map<number, Seen>();
  private timer?: NodeJS.Timeout;
  private intervalMs = PROCESS_IDLE_POLL_MS;
  /** A look is reading /proc: the next tick skips rather than overlaps it. */
  private looking = false;

  private readonly mainPid: number;
  private readonly record: RecordProcess;
  private readonly now: () => number;

  constructor(mainPid: number, now: () => number, record: RecordProcess) {
    this.mainPid = mainPid;
    this.now = now;
    this.record = record;
  }

  start(intervalMs = PROCESS_IDLE_POLL_MS): void {
    this.every(intervalMs);
    void this.look();
  }

  /** Looks every PROCESS_POLL_MS from now on (a reload is under way), starting with one at once. */
  quicken(): void {
    if (this.timer === undefined || this.intervalMs === PROCESS_POLL_MS) return;
    this.every(PROCESS_POLL_MS);
    void this.look();
  }

  private every(intervalMs: number): void {
    clearInterval(this.timer);
    this.intervalMs = intervalMs;
    this.timer = setInterval(() => void this.look(), intervalMs);
    this.timer.unref();
  }

  /** Teardown: no more looks, nothing more recorded. */
  cancel(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One last look (what ended with the main process), then no more; a look still reading is dropped. */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.apply(new Map(), new Map());
  }

  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      const t = this.now();
      const tree = new Map<number, number>();
      for (let parents = [this.mainPid]; parents.length > 0; ) {
        const level = await Promise.all(parents.map(async (parent) => (await childrenOf(parent)).map((child) => [child, parent] as const)));
        const found = level.flat();
        const running = await Promise.all(found.map(async ([child]) => runs(await readProcStatAsync(child))));
        parents = [];
        for (const [i, [child, parent]] of found.entries()) {
          if (!running[i]) continue;
          tree.set(child, parent);
          parents.push(child);
        }
      }
      // Kept up to date: a forked worker names itself a moment after the fork (nginx's "worker
      // process"), and the last title tells what it was doing when it ended ("is shutting down").
      const named = new Set([...tree.keys(), ...[...tree].filter(([pid]) => !this.seen.has(pid)).map(([, ppid]) => ppid)]);
      const commands = new Map(await Promise.all([...named].map(async (pid) => [pid, await readCommandLine(pid)] as const)));
      if (this.timer === undefined) return; // stopped or cancelled while this look read
      this.apply(tree, commands, t);
    } finally {
      this.looking = false;
    }
  }

  /** Records what changed since the last look: `tree` maps each process found to its parent, `t` is when the look began. */
  private apply(tree: ReadonlyMap<number, number>, commands: ReadonlyMap<number, string | undefined>, t = this.now()): void {
    for (const [pid, was] of this.seen) {
      const command = commands.get(pid);
      if (tree.has(pid) && command !== undefined && command !== '') was.command = command;
      was.looks++;
      const named = was.command !== was.parentCommand || was.looks >= NAMING_LOOKS;
      if (!was.recorded && (named || !tree.has(pid))) {
        was.recorded = true;
        this.record('process-started', { pid, ppid: was.ppid, command: was.command }, was.since);
      }
      if (tree.has(pid)) continue;
      this.seen.delete(pid);
      this.record('process-exited', { pid, ppid: was.ppid, command: was.command });
    }
    for (const [pid, ppid] of tree) {
      if (this.seen.has(pid)) continue;
      this.seen.set(pid, { ppid, command: commands.get(pid) ?? '', since: t, recorded: false, looks: 0, parentCommand: commands.get(ppid) ?? '' });
    }
  }
}
