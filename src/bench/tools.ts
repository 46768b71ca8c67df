// Running the other tools of a benchmark: whether a binary is installed, its version line, and one
// bounded run of it whose output the benchmark parses. A missing tool is a "not installed" row,
// never a failure of the benchmark.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { execa } from 'execa';

/** The absolute path of `cmd` on PATH, or undefined. */
export async function which(cmd: string): Promise<string | undefined> {
  const r = await execa('sh', ['-c', `command -v ${cmd}`], { reject: false });
  return r.exitCode === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

/** The first line of `cmd <args>` (stdout, else stderr), or undefined when it does not run. */
export async function versionLine(cmd: string, args: string[]): Promise<string | undefined> {
  const r = await execa(cmd, args, { reject: false, timeout: 5_000, all: true });
  const line = (r.all ?? '').split('\n').find((l) => l.trim() !== '');
  return line?.trim();
}

export interface ToolRun {
  output: string;
  stdout: string;
  exitCode: number | undefined;
  /** User + system CPU seconds the tool used (GNU time), when /usr/bin/time is there. */
  cpuSeconds?: number;
}

/**
 * Runs a tool to completion, killed after `timeoutMs`; its combined output, exit code and CPU time.
 * CPU time per request or packet compares tools even on a busy machine, where rates only say how
 * much of the machine each one got.
 */
export async function runTool(cmd: string, args: string[], timeoutMs: number): Promise<ToolRun> {
  const dir = mkdtempSync(join(tmpdir(), 'zerodrop-bench-time-'));
  const timeFile = join(dir, 'time');
  const timed = existsSync(GNU_TIME);
  try {
    const r = timed
      ? await execa(GNU_TIME, ['-o', timeFile, '-f', '%U %S', cmd, ...args], { reject: false, timeout: timeoutMs, all: true, forceKillAfterDelay: 2_000 })
      : await execa(cmd, args, { reject: false, timeout: timeoutMs, all: true, forceKillAfterDelay: 2_000 });
    const run: ToolRun = { output: r.all ?? '', stdout: r.stdout ?? '', exitCode: r.exitCode };
    if (timed && existsSync(timeFile)) {
      const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
      if (user !== undefined && system !== undefined && Number.isFinite(user + system)) run.cpuSeconds = user + system;
    }
    return run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const GNU_TIME = '/usr/bin/time';

/** "Requests/sec:  12345.67" as printed by hey and wrk. */
export function parseRequestsPerSec(output: string): number | undefined {
  const m = /Requests\/sec:\s+([\d.]+)/.exec(output);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}
