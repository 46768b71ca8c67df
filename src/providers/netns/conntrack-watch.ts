// Which pod kube-proxy sent each of the harness's connections to, from the node the harness reaches
// Services through. A cluster's balancer tells the client nothing: a request that died before any
// response (a reset, an EOF, a timeout on a connection already open) names no pod, and its failure
// would be placed on none. The node's conntrack does know: kube-proxy's DNAT writes the pod's
// address into the reply direction of the connection's entry. `conntrack -E` (conntrack-tools)
// reports each new entry as it is made, with the time it saw it.
//
// A connection refused at its handshake, or whose SYN was never answered, is not placed this way:
// the client never learns its own source port (Node gives it only once connected), so nothing joins
// it to an entry.

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { RoutedConnection, RouteWatch } from '../../observe/routed-connections.ts';
import type { Clock } from '../../observe/clock.ts';

/**
 * `[1795878576.395879]\t    [NEW] tcp      6 120 SYN_SENT src=A dst=B sport=X dport=Y [UNREPLIED] src=P dst=Q sport=R dport=S`
 * (conntrack -E -o timestamp): the first tuple is the original direction, the second the reply.
 */
export function parseNewFlow(line: string): { wallMs: number; src: string; dst: string; sport: number; dport: number; replySrc: string } | undefined {
  const m = /^\[(\d+)\.(\d+)\]\s+\[NEW\] tcp\s.*?src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+) .*?src=(\S+) dst=\S+ sport=\d+ dport=\d+/.exec(line);
  if (!m) return undefined;
  const wallMs = Number(m[1]) * 1000 + Number(`0.${m[2]}`) * 1000;
  return { wallMs, src: m[3]!, dst: m[4]!, sport: Number(m[5]), dport: Number(m[6]), replySrc: m[7]! };
}

/**
 * Watches the new TCP connections from `client` to `to` in network namespace `netns` until stopped.
 * conntrack stamps each entry with this machine's wall time; `clock` puts it on the run clock. Where
 * conntrack cannot run (not installed), the watch sees nothing and says why once.
 */
export function watchRoutedConnections(opts: { netns: string; client: string; to: string; clock: Pick<Clock, 'fromWallTime'>; onProblem?: (message: string) => void }): RouteWatch {
  const seen: RoutedConnection[] = [];
  let child: ChildProcess;
  try {
    child = spawn(
      'ip',
      // A netlink buffer large enough for a burst of thousands of connections: an overrun (ENOBUFS)
      // loses events, which leaves those connections unplaced, never wrongly placed.
      ['netns', 'exec', opts.netns, 'conntrack', '-E', '-e', 'NEW', '-p', 'tcp', '--orig-src', opts.client, '--orig-dst', opts.to, '-o', 'timestamp', '--buffer-size', String(8 * 1024 * 1024)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    opts.onProblem?.(`conntrack could not start: ${(error as Error).message}`);
    return { seenAny: () => false, stop: () => Promise.resolve([]) };
  }
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    const flow = parseNewFlow(line);
    if (!flow) return;
    seen.push({ t: opts.clock.fromWallTime(flow.wallMs), clientPort: flow.sport, to: { host: flow.dst, port: flow.dport }, podIp: flow.replySrc });
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
  let stopped = false;
  void exited.then((code) => {
    if (!stopped) opts.onProblem?.(`conntrack -E ended early (exit ${code ?? 'error'}): ${stderr.trim() || 'no message'}`);
  });
  return {
    seenAny: () => seen.length > 0,
    async stop() {
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      lines.close();
      return seen;
    },
  };
}
