// Runs a host command (ip, mount, nsenter) and fails with its stderr: the agent's sandbox and
// volume steps are short commands whose failure must name what failed.

import { execFile } from 'node:child_process';

export class CommandError extends Error {}

export function run(file: string, args: readonly string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { timeout: opts.timeoutMs ?? 10_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new CommandError(`${file} ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like run, but a failure is only returned, for teardown steps that may find things already gone. */
export async function tryRun(file: string, args: readonly string[]): Promise<string | undefined> {
  try {
    await run(file, args);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
