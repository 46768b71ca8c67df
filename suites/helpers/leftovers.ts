// Finds what a run may leave behind: processes (by an environment mark every pod inherits) and the
// listening TCP sockets those processes held (from /proc). Linux only, like the CI machine. Sockets
// are matched to the run by owner, so other programs listening on this machine do not count.

import { readdir, readFile, readlink } from 'node:fs/promises';
import { readProcStat, runs } from '../../src/state/proc-stat.ts';

/**
 * The run's processes: those carrying its environment mark, those whose command line names `under`
 * (its TMPDIR: nginx overwrites its environment block with its process title, so the mark cannot
 * find it, but its master's title keeps `-c <pod dir>/nginx.conf`), and every descendant of those.
 */
export async function leftoverProcesses(mark: string, under?: string): Promise<number[]> {
  const found = new Set<number>();
  const parentOf = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = readProcStat(pid);
      // A zombie no longer runs or holds a socket; it waits for its parent to reap it.
      if (!runs(stat)) continue;
      parentOf.set(pid, stat.ppid);
      const environ = await readFile(`/proc/${entry}/environ`, 'utf8');
      if (environ.split('\0').includes(`ZERODROP_TEST_MARK=${mark}`)) found.add(pid);
      else if (under !== undefined && (await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes(under)) found.add(pid);
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (!found.has(pid) && found.has(ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return [...found].sort((a, b) => a - b);
}

/** Listening IPv4 TCP sockets as "address:port", keyed by socket inode. */
export async function listeningSockets(): Promise<Map<string, string>> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  const LISTEN = '0A';
  const sockets = new Map<string, string>();
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols[3] !== LISTEN || cols[1] === undefined || cols[9] === undefined) continue;
    const [hexAddr = '', hexPort = ''] = cols[1].split(':');
    const bytes = hexAddr.match(/../g) ?? [];
    sockets.set(cols[9], `${bytes.reverse().map((b) => parseInt(b, 16)).join('.')}:${parseInt(hexPort, 16)}`);
  }
  return sockets;
}

/** The addresses on which the given processes are listening right now. */
export async function listeningAddressesOf(pids: readonly number[]): Promise<string[]> {
  const listening = await listeningSockets();
  const addresses = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      const address = inode ? listening.get(inode) : undefined;
      if (address) addresses.add(address);
    }
  }
  return [...addresses];
}
