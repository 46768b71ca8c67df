// How an external load client (hey, iperf3) runs: as the leader of its own process group, started
// the way the local provider starts a container (spawnGroup), and listed in the run's state record
// (src/state/run-record.ts) while it runs. A client is a process of the harness's machine whatever
// the provider, and it runs for its own fixed count or time: a `zerodrop run` that is SIGKILLed
// would leave it loading the target until then, so `zerodrop clean` must find it, and it does,
// through the same recorded-group path as a pod's (src/state/clean.ts). A client that ends while
// the run goes on is taken off the record again.
//
// Stopping it signals the whole group, never the leader alone: first the signal on which the
// client still prints its report, then SIGKILL if the group has not ended in time. A harness that
// exits without its teardown (a second Ctrl-C) SIGKILLs every running client group from its exit
// hook, as the local provider does its pods.

import { forgetGroup, groupAlive, killGroupOnExit, signalGroup, spawnGroup, waitForGroupsGone } from '../../providers/local/processes.ts';
import type { LeftoverTracker } from '../../state/run-record.ts';

export interface ClientResult {
  stdout: string;
  stderr: string;
  exitCode?: number;
  signal?: NodeJS.Signals;
}

export interface ClientGroupOptions {
  /** Interrupts the client when aborted (the run's teardown). */
  signal?: AbortSignal;
  /** The run's state record; none in unit tests that need no `clean`. */
  tracker?: LeftoverTracker;
  /** The signal on which the client stops and still prints its report. */
  interruptSignal: NodeJS.Signals;
  /** How long the group gets after interruptSignal before it is SIGKILLed. */
  forceKillAfterMs: number;
}

export interface ClientGroup {
  /** The group's leader (and so the group id); undefined when the client could not be started. */
  readonly pid: number | undefined;
  /** Resolves once the client has exited, its output is read and its group is gone. */
  readonly result: Promise<ClientResult>;
  /** Asks the whole group to stop (interruptSignal), SIGKILLing it after forceKillAfterMs. */
  interrupt(): void;
}

/** How long the group's last processes get to be reaped after the leader has exited. */
const REAP_WAIT_MS = 1_000;

export function startClientGroup(command: readonly string[], opts: ClientGroupOptions): ClientGroup {
  const child = spawnGroup(command, { cwd: process.cwd(), env: process.env });
  const pid = child.pid;
  if (pid !== undefined) {
    killGroupOnExit(pid);
    opts.tracker?.processGroupStarted(pid);
  }
  const stdout: string[] = [];
  const stderr: string[] = [];
  for (const [stream, chunks] of [[child.stdout, stdout], [child.stderr, stderr]] as const) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => chunks.push(chunk));
    stream?.on('error', () => undefined);
  }

  let forceKill: NodeJS.Timeout | undefined;
  // Once the client has exited its group id may be given out again: it is never signalled after.
  let exited = false;
  const interrupt = (): void => {
    if (pid === undefined || forceKill !== undefined || exited) return;
    signalGroup(pid, opts.interruptSignal);
    forceKill = setTimeout(() => exited || signalGroup(pid, 'SIGKILL'), opts.forceKillAfterMs);
  };
  const onAbort = (): void => interrupt();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) interrupt();

  // What the leader leaves in its group goes with it, as a container's processes go with its main one.
  child.once('exit', () => {
    if (pid !== undefined) {
      signalGroup(pid, 'SIGKILL');
      forgetGroup(pid);
    }
    exited = true;
  });
  let spawnError: Error | undefined;
  child.on('error', (error) => (spawnError ??= error));
  // 'close' comes after 'exit' and the end of the output, or after 'error' when the spawn failed.
  const result = new Promise<ClientResult>((resolve) => {
    child.once('close', (code, signal) => {
      exited = true;
      clearTimeout(forceKill);
      opts.signal?.removeEventListener('abort', onAbort);
      const done = async (): Promise<void> => {
        if (pid !== undefined) {
          await waitForGroupsGone([pid], REAP_WAIT_MS);
          // One that will not die stays listed, for `zerodrop clean`.
          if (!groupAlive(pid)) opts.tracker?.processGroupEnded(pid);
        }
        resolve({
          stdout: stdout.join(''),
          stderr: `${spawnError ? `${spawnError.message}\n` : ''}${stderr.join('')}`,
          // After a failed spawn Node reports the negated errno as the code: no exit code then.
          ...(code !== null && pid !== undefined ? { exitCode: code } : {}),
          ...(signal !== null ? { signal } : {}),
        });
      };
      void done();
    });
  });
  return { pid, result, interrupt };
}
