// A zerodrop process (a `zerodrop run`, `npm run bench`) started by a test to be interrupted, with a
// mark in its environment, a state directory and a TMPDIR of its own, so that whatever it leaves
// behind is found and is its own: processes, listening sockets, temporary directories, state records.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.ts';
import { leftoverProcesses, listeningAddressesOf, listeningSockets } from './leftovers.ts';

/** How long after the signal a process's pods and servers may take to be gone. */
const GONE_WITHIN_MS = 3_000;

// mulberry32, the same generator the local balancers draw their programming lags from: a failing
// draw of a random moment can be replayed.
export { seededRandom } from '../../src/providers/local/programming-schedule.ts';

/** Disposing it (`await using`) SIGKILLs the process if it still runs, cleans what it left, and stops the sampling, so a failed test leaves nothing. */
export interface MarkedProcess extends AsyncDisposable {
  child: ChildProcess;
  env: { mark: string; stateDir: string; tmp: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the process has printed `text` ('' at once), or has exited. */
  printed(text: string): Promise<void>;
  /** Every address the process and its children listened on while it ran (sampled); stops sampling. */
  held(): Promise<string[]>;
}

/** Starts `node <args>` in `dir` (made here): its state directory, its TMPDIR, and a fresh mark. */
export async function startMarked(dir: string, args: readonly string[]): Promise<MarkedProcess> {
  const env = { mark: randomUUID(), stateDir: join(dir, 'state'), tmp: join(dir, 'tmp') };
  await mkdir(env.tmp, { recursive: true });
  const child = spawn(process.execPath, args, {
    env: { ...process.env, CI: '1', ZERODROP_TEST_MARK: env.mark, ZERODROP_STATE_DIR: env.stateDir, TMPDIR: env.tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  // Sockets are gone with their process, so what it listened on is sampled while it runs.
  const held = new Set<string>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      for (const address of await listeningAddressesOf(await leftoverProcesses(env.mark, env.tmp))) held.add(address);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return {
    child,
    env,
    exited,
    output: () => output,
    printed: async (text: string) => {
      while (!output.includes(text) && child.exitCode === null && child.signalCode === null) await new Promise((r) => setTimeout(r, 10));
    },
    held: async () => {
      sampling = false;
      await sampler;
      return [...held];
    },
    [Symbol.asyncDispose]: async () => {
      sampling = false;
      if (child.exitCode === null && child.signalCode === null) {
        // The test ended (failed) with the run still going: SIGKILL leaves its pods and load
        // drivers, which `zerodrop clean` finds in the run's state record, as a user would.
        child.kill('SIGKILL');
        await exited;
        await cleanAfterKill(env);
      }
      await sampler;
    },
  };
}

/** `zerodrop clean` on the killed process's state directory, then SIGKILL whatever still carries its mark. */
async function cleanAfterKill(env: MarkedProcess['env']): Promise<void> {
  const clean = spawn(process.execPath, [join(packageRoot, 'src/cli/main.ts'), 'clean'], {
    env: { ...process.env, CI: '1', ZERODROP_STATE_DIR: env.stateDir, TMPDIR: env.tmp },
    stdio: 'ignore',
  });
  await new Promise((resolve) => clean.on('exit', resolve));
  for (const pid of await leftoverProcesses(env.mark, env.tmp)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone between the listing and the kill.
    }
  }
}

export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until the process's marked processes are gone, or the time is up; returns what is left. */
export async function processesGone(mark: string, under: string): Promise<number[]> {
  const deadline = performance.now() + GONE_WITHIN_MS;
  let left = await leftoverProcesses(mark, under);
  while (left.length > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = await leftoverProcesses(mark, under);
  }
  return left;
}

export async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

export async function stillListening(addresses: readonly string[]): Promise<string[]> {
  const now = new Set((await listeningSockets()).values());
  return addresses.filter((a) => now.has(a));
}

/**
 * What an ended process left: processes still running (after waiting a little for them to go),
 * addresses still listened on, zerodrop's temporary directories and state records. All empty when
 * it cleaned up after itself.
 */
export async function leftBehind(run: MarkedProcess): Promise<{ processes: number[]; listening: string[]; tempDirs: string[]; records: string[] }> {
  const held = await run.held();
  return {
    processes: await processesGone(run.env.mark, run.env.tmp),
    listening: await stillListening(held),
    tempDirs: (await entries(run.env.tmp)).filter((e) => e.startsWith('zerodrop-')),
    records: await entries(join(run.env.stateDir, 'runs')),
  };
}
