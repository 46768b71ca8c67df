// The synchronous calls the harness makes on its main thread, timed, so that a lagging event loop is
// placed on the call that held it. Starting a process is the one that matters: spawn() returns only
// once the new process has exec'd, and on a busy machine the new process can wait hundreds of
// milliseconds for a core before it gets there (measured: 370 ms with 2.3 ms of the harness's own CPU,
// on two cores with eight busy processes). The loop monitor takes what was timed in each of its
// windows and the validity check names it.

/** One call that took at least MIN_MS. */
export interface BlockingCall {
  what: string;
  ms: number;
}

/** Shorter calls are not worth a record: the loop's lag budget is 100 ms. */
const MIN_MS = 5;

type Listener = (call: BlockingCall) => void;
const listeners = new Set<Listener>();

/** Runs `call`, and tells the loop monitors how long it held the thread when that was MIN_MS or more. */
export function timedBlockingCall<T>(what: string, call: () => T): T {
  const started = performance.now();
  try {
    return call();
  } finally {
    const ms = performance.now() - started;
    if (ms >= MIN_MS && listeners.size > 0) for (const listener of listeners) listener({ what, ms: Math.round(ms * 10) / 10 });
  }
}

/** Hears every blocking call from now on; returns the way to stop. */
export function onBlockingCall(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
