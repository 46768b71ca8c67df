// Which stop signal a workload's container must be given in a cluster, and whether a cluster honours
// it. A container image carries its own STOPSIGNAL (the official nginx image: SIGQUIT, its graceful
// stop; haproxy's: SIGUSR1, its soft-stop); a Pod can override it only with `lifecycle.stopSignal`
// (KEP-4960, feature gate ContainerStopSignals, alpha since 1.33, off by default). Where the gate is
// off the API server drops the field without an error and the image's own signal applies, which
// would turn a "plain SIGTERM" naive twin into a graceful one: such a run is skipped, never judged.
// Kept apart from manifests.ts so that deciding it loads no Kubernetes schemas (support.ts runs for
// local runs too).

import { posix } from 'node:path';
import type { Workload } from '../../model/workload.ts';

/** The STOPSIGNAL of the stock images manifests.ts runs each program on; SIGTERM where none is set. */
export const IMAGE_STOP_SIGNALS: Readonly<Record<string, NodeJS.Signals>> = {
  nginx: 'SIGQUIT',
  haproxy: 'SIGUSR1',
};

/**
 * The program a container runs: the first word of a defined pod's argv past `env` and its
 * assignments (Workload.defined), `node` for a reference app (`node fixtures/x.mjs`), the system a
 * shell script execs (`sh -c '... exec SYSTEM ...'`) otherwise.
 */
export function executableOf(workload: Pick<Workload, 'command' | 'defined'>): { executable: string; script: string | undefined } {
  if (workload.defined) return { executable: posix.basename(programOf(workload.defined.argv)), script: undefined };
  const [program = '', ...args] = workload.command;
  const script = (program === 'sh' || program === '/bin/sh') && args[0] === '-c' ? args[1] : undefined;
  // The last `exec` that names a program: `exec 3<"$conf"` only redirects, the shell stays.
  const execs = script === undefined ? [] : [...script.matchAll(/\bexec\s+(\S+)/g)].map((m) => m[1] ?? '').filter((w) => !/^\d*[<>]/.test(w));
  const executable = script !== undefined ? (execs.at(-1) ?? '') : program;
  return { executable: posix.basename(executable), script };
}

/** The program an argv runs: its first word, or past `env` and its NAME=value assignments. */
function programOf(argv: readonly string[]): string {
  if (posix.basename(argv[0] ?? '') !== 'env') return argv[0] ?? '';
  const i = argv.findIndex((w, j) => j > 0 && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  return i === -1 ? '' : (argv[i] ?? '');
}

/** The signal the container's `lifecycle.stopSignal` must state, or undefined when its image's own is the one wanted. */
export function statedStopSignal(workload: Pick<Workload, 'command' | 'stopSignal' | 'defined' | 'image'>): NodeJS.Signals | undefined {
  // A profile's own image: its STOPSIGNAL is not known here, so any signal but SIGTERM is stated.
  const own = (workload.image ? undefined : IMAGE_STOP_SIGNALS[executableOf(workload).executable]) ?? 'SIGTERM';
  const wanted = workload.stopSignal ?? 'SIGTERM';
  return wanted === own ? undefined : wanted;
}
