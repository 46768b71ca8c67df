// Running the other tools of a benchmark: whether a binary is installed, its version line, and one
// bounded run of it whose output the benchmark parses. A missing tool is a "not installed" row,
// never a failure of the benchmark.

import { execa } from 'execa';

import { readProcStat } from '../state/proc-stat.ts';

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
  /** User + system CPU seconds the tool used, where /proc tells (Linux). */
  cpuSeconds?: number;
}

/**
 * Runs a tool to completion, killed after `timeoutMs`; its combined output, exit code and CPU time.
 * CPU time per request or packet compares tools even on a busy machine, where rates only say how
 * much of the machine each one got.
 */
export async function runTool(
  cmd: string,
  args: string[],
  timeoutMs: number,
  signal?: AbortSignal,
  opts: { forceKillAfterMs?: number; ownGroup?: boolean } = {},
): Promise<ToolRun> {
  signal?.throwIfAborted();
  // The tool is the one child that ends during its run (the benchmark's servers end at its close),
  // so what the kernel adds to this process's reaped-children CPU is the tool's.
  const before = readProcStat('self')?.reapedChildrenCpuSeconds;
  const r = await execa(cmd, args, {
    reject: false,
    all: true,
    // A tool that ignores SIGTERM is killed this long after it; one with a teardown of its own (a
    // `zerodrop run`) needs more than the default 2 s.
    forceKillAfterDelay: opts.forceKillAfterMs ?? 2_000,
    // In a group of its own, a Ctrl-C at the terminal does not reach it besides the cancel's SIGTERM
    // (which a `zerodrop run` would take for a second Ctrl-C, skipping its teardown).
    detached: opts.ownGroup ?? false,
    timeout: timeoutMs,
    ...(signal ? { cancelSignal: signal } : {}),
  });
  const after = readProcStat('self')?.reapedChildrenCpuSeconds;
  // Interrupted: the tool was stopped half-way, so its output measures nothing.
  signal?.throwIfAborted();
  const run: ToolRun = { output: r.all ?? '', stdout: r.stdout ?? '', exitCode: r.exitCode };
  if (before !== undefined && after !== undefined) run.cpuSeconds = after - before;
  return run;
}

/** "Requests/sec:  12345.67" as printed by hey and wrk. */
export function parseRequestsPerSec(output: string): number | undefined {
  const m = /Requests\/sec:\s+([\d.]+)/.exec(output);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}
