// Finds what a run may leave behind: processes (by an environment mark every pod inherits) and
// listening TCP sockets (from /proc/net/tcp). Linux only, like the CI machine.

import { readdir, readFile } from 'node:fs/promises';

export async function leftoverProcesses(mark: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = await readFile(`/proc/${entry}/environ`, 'utf8');
      if (environ.split('\0').includes(`ZERODROP_TEST_MARK=${mark}`)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return pids;
}

/** "address:port" of every listening IPv4 TCP socket. */
export async function listeningSockets(): Promise<string[]> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  const LISTEN = '0A';
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === LISTEN && cols[1] !== undefined)
    .map((cols) => {
      const [hexAddr = '', hexPort = ''] = (cols[1] ?? '').split(':');
      const bytes = hexAddr.match(/../g) ?? [];
      return `${bytes.reverse().map((b) => parseInt(b, 16)).join('.')}:${parseInt(hexPort, 16)}`;
    });
}
