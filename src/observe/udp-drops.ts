// Datagrams the kernel dropped because a UDP socket's receive buffer was full: the per-socket
// `drops` column of /proc/net/udp (https://docs.kernel.org/networking/proc_net_tcp.html describes
// the table; `drops` is sk_drops). When the machine cannot keep up (a starved pod, a lagging
// harness), the kernel drops datagrams at full buffers, and those losses say nothing about the
// drain under test: a packet load reads these counters so that noLostPackets can tell the two apart.
// Linux only; elsewhere the counters are unknown (undefined), never zero.

import { readFileSync } from 'node:fs';

/** Drops by socket inode, for sockets whose local address passes `filter`; undefined when unreadable. */
export function readUdpDrops(filter: (ip: string, port: number) => boolean): Map<string, number> | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/net/udp', 'utf8');
  } catch {
    return undefined;
  }
  const drops = new Map<string, number>();
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    const local = cols[1];
    const inode = cols[9];
    const dropped = Number(cols[12]);
    if (local === undefined || inode === undefined || !Number.isFinite(dropped)) continue;
    const [hexIp = '', hexPort = ''] = local.split(':');
    if (hexIp.length !== 8) continue;
    // The address is the kernel's 32-bit word printed in host byte order (little endian here).
    const n = Number.parseInt(hexIp, 16);
    const le = new DataView(new ArrayBuffer(4));
    le.setUint32(0, n, true);
    const ip = `${le.getUint8(0)}.${le.getUint8(1)}.${le.getUint8(2)}.${le.getUint8(3)}`;
    if (filter(ip, Number.parseInt(hexPort, 16))) drops.set(inode, dropped);
  }
  return drops;
}

/** Drops since `before`, over the sockets of `after` (new sockets count from 0). */
export function dropsSince(before: Map<string, number> | undefined, after: Map<string, number> | undefined): number | undefined {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [inode, n] of after) total += Math.max(0, n - (before.get(inode) ?? 0));
  return total;
}
