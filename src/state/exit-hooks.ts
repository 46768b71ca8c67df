// Synchronous clean-up that must run however the harness's process ends: SIGKILL the pods left
// running, remove their directories, take a netns cluster down, drop the run's state record.
//
// Node fires 'exit' when the process ends by itself, by process.exit() or by an uncaught exception,
// but not when a signal's default action ends it. The CLI answers Ctrl-C itself (it tears down, then
// exits 130); a program that embeds zerodrop and leaves the signal alone does not: a vitest worker
// running `zerodrop/vitest` tests dies by the terminal's SIGINT, and its pods (process groups of
// their own, which the terminal's Ctrl-C does not reach) went on running. So while a hook is
// registered this module also listens for SIGINT, SIGTERM and SIGHUP; when it is the only listener
// (nobody else has chosen what the signal does), it runs the hooks and raises the signal again, so
// the process still ends by it, as it would have. Where another listener exists, that one decides.

const hooks: (() => void)[] = [];
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

/**
 * Runs `hook` as the process ends, unless the returned function is called first (the owner cleaned
 * up itself). Hooks run last registered first, as disposals unwind: what was set up first (the run's
 * record) is looked at after what was built on it (its pods).
 */
export function onExit(hook: () => void): () => void {
  hooks.push(hook);
  install();
  return () => {
    const at = hooks.lastIndexOf(hook);
    if (at >= 0) hooks.splice(at, 1);
    if (hooks.length === 0) uninstall();
  };
}

function runHooks(): void {
  for (let hook = hooks.pop(); hook; hook = hooks.pop()) {
    try {
      hook();
    } catch {
      // An exit hook must not throw: the hooks after it still run.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  runHooks();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runHooks);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', runHooks);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
