// The benchmark's own servers (nginx, the reference UDP echo, an iperf3 server): each the leader of a
// process group of its own, stopped with its whole group when disposed. A bench that exits without
// its teardown (a second Ctrl-C) SIGKILLs every server still running and removes its directory from
// an exit hook, as the local provider does with its pods: no server outlives `npm run bench`.

import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

import { forgetGroup, killGroupOnExit, signalGroup, spawnGroup, waitForGroupsGone } from '../providers/local/processes.ts';

export interface ServerProcess extends AsyncDisposable {
  readonly child: ChildProcess;
  /** Resolves when the server's main process has exited. */
  readonly exited: Promise<void>;
}

export interface ServerOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** The signal on which the server shuts down by itself (SIGKILL follows after STOP_TIMEOUT_MS). */
  stopSignal: NodeJS.Signals;
  /** A directory of the server's own, removed once it is stopped. */
  dir?: string;
  /** Whether the caller reads stdout; otherwise it is drained so that a chatty server never blocks. */
  readStdout?: boolean;
}

const STOP_TIMEOUT_MS = 3_000;

export function startServerProcess(argv: readonly string[], o: ServerOptions): ServerProcess {
  const child = spawnGroup(argv, { cwd: o.cwd, env: o.env ?? process.env });
  // A server that cannot start (no such binary) ends at once; the caller's wait for it fails.
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
  if (!o.readStdout) child.stdout?.resume();
  child.stderr?.pipe(process.stderr, { end: false });
  const pid = child.pid;
  if (pid !== undefined) killGroupOnExit(pid, o.dir);
  const dispose = async (): Promise<void> => {
    if (pid !== undefined) {
      signalGroup(pid, o.stopSignal);
      const kill = setTimeout(() => signalGroup(pid, 'SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(kill);
      // The group's other processes (nginx's worker) may outlive the leader by a moment.
      signalGroup(pid, 'SIGKILL');
      await waitForGroupsGone([pid], STOP_TIMEOUT_MS);
      forgetGroup(pid);
    }
    if (o.dir !== undefined) rmSync(o.dir, { recursive: true, force: true });
  };
  return { child, exited, [Symbol.asyncDispose]: dispose };
}
