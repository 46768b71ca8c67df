// Child processes a test spawned: what is left of them is SIGKILLed after each test, and the test
// waits for them to be gone, so that no pod outlives its test or holds a port for the next one.

import type { ChildProcess } from 'node:child_process';

/** Empties `children`, SIGKILLing each one still running and waiting for its exit. */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }),
  );
}
