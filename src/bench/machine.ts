// The machine a benchmark ran on, written with its numbers: figures mean little without it.

import os from 'node:os';
import { readFileSync } from 'node:fs';

import { versionLine } from './tools.ts';

export interface MachineFacts {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  /** Load average over 1, 5, 15 minutes when the benchmark started: other work competes for the cores. */
  loadAverage: number[];
  tools: Record<string, string>;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1]) return m[1].trim();
  } catch {
    // not Linux
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

const TOOL_VERSIONS: Record<string, string[]> = {
  nginx: ['nginx', '-v'],
  wrk: ['wrk', '--version'],
  iperf3: ['iperf3', '--version'],
  autocannon: [process.execPath, 'node_modules/autocannon/autocannon.js', '--version'],
};

export async function machineFacts(cwd: string): Promise<MachineFacts> {
  const tools: Record<string, string> = {};
  for (const [name, [cmd, ...args]] of Object.entries(TOOL_VERSIONS)) {
    if (cmd === undefined) continue;
    const line = await versionLine(cmd, name === 'autocannon' ? args.map((a) => (a.startsWith('node_modules') ? `${cwd}/${a}` : a)) : args);
    tools[name] = line ?? 'not installed';
  }
  // hey has no version flag; its Debian package version says which one it is.
  tools.hey = (await versionLine('dpkg-query', ['-W', '-f', '${Version}', 'hey'])) ?? 'not installed';
  return {
    cpuModel: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: os.release(),
    node: process.version,
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
    tools,
  };
}
