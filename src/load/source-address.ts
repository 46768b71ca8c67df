// The local address a client socket binds to for a target: UDP clients bind before they connect
// (so that only the target's datagrams arrive), and a socket bound to 127.0.0.1 cannot reach an
// address outside loopback, such as a netns cluster node's. The kernel's own choice for the route
// to the target (`ip route get`'s prefsrc) is taken, never the wildcard address.

import { execFileSync } from 'node:child_process';
import { isIPv4 } from 'node:net';

const chosen = new Map<string, string>();

export function sourceAddressFor(target: string): string {
  if (!isIPv4(target) || target.startsWith('127.')) return '127.0.0.1';
  let source = chosen.get(target);
  if (source === undefined) {
    try {
      const [route] = JSON.parse(execFileSync('ip', ['-j', 'route', 'get', target], { encoding: 'utf8' })) as { prefsrc?: string }[];
      source = route?.prefsrc ?? '127.0.0.1';
    } catch {
      // No iproute2 (not Linux): loopback, as before; a non-loopback target then fails to connect, saying so.
      source = '127.0.0.1';
    }
    chosen.set(target, source);
  }
  return source;
}
