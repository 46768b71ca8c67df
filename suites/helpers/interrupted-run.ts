// A real `zerodrop` process started to be interrupted: the tests that press Ctrl-C mid-run wait
// until it has reached a step (its pods are up and the chaos is under way), then send SIGINT.

import { spawn, type ChildProcess } from 'node:child_process';

export interface StartedRun {
  child: ChildProcess;
  /** Resolves once stdout has shown the step. */
  reached: Promise<void>;
  /** The exit code. */
  exited: Promise<number | null>;
}

/** Runs `src/cli/main.ts <args>` with `env` added to this process's environment, stdout watched for `step`. */
export function startRunUntil(args: string[], env: Record<string, string>, step: string): StartedRun {
  const child = spawn(process.execPath, ['src/cli/main.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const reached = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(step)) resolve();
    });
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, reached, exited };
}
