// The agent's HTTPS server on nodeIP:10250, the kubelet's port, serving what the API server's log
// proxy asks of a kubelet (GET .../pods/NAME/log becomes GET /containerLogs/{namespace}/{pod}/{container}
// on the node, pkg/kubelet/server/server.go getContainerLogs) with the query of PodLogOptions:
// follow, timestamps, previous, sinceSeconds, sinceTime, tailLines, limitBytes
// (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#read-log-of-the-specified-pod).
// Client certificates signed by the cluster CA are required, as the API server presents its
// kubelet client certificate. GET /healthz answers `ok`.

import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { formatNanos, parseTimestamp, type ContainerLog, type Follower, type LogLine } from './container-log.ts';

export interface LogQuery {
  follow: boolean;
  timestamps: boolean;
  previous: boolean;
  /** Nanoseconds: lines at or after it. */
  since?: bigint;
  tailLines?: number;
  limitBytes?: number;
}

function bool(value: string | null): boolean {
  // Go's strconv.ParseBool, as the query decoder reads booleans.
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

/** The log query, or the message of a 400 answer. */
export function parseLogQuery(params: URLSearchParams, nowNanos: bigint): LogQuery | string {
  const query: LogQuery = { follow: bool(params.get('follow')), timestamps: bool(params.get('timestamps')), previous: bool(params.get('previous')) };
  const int = (name: string, min: number): number | string | undefined => {
    const raw = params.get(name);
    if (raw === null || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) return `${name}: must be an integer >= ${min}`;
    return n;
  };
  const sinceSeconds = int('sinceSeconds', 1);
  const tailLines = int('tailLines', 0);
  const limitBytes = int('limitBytes', 1);
  for (const v of [sinceSeconds, tailLines, limitBytes]) if (typeof v === 'string') return v;
  const sinceTime = params.get('sinceTime');
  if (sinceTime && sinceSeconds !== undefined) return 'at most one of sinceTime or sinceSeconds may be specified';
  if (sinceTime) {
    const t = parseTimestamp(sinceTime);
    if (t === undefined) return `sinceTime: not an RFC3339 time: ${sinceTime}`;
    query.since = t;
  } else if (typeof sinceSeconds === 'number') query.since = nowNanos - BigInt(sinceSeconds) * 1_000_000_000n;
  if (typeof tailLines === 'number') query.tailLines = tailLines;
  if (typeof limitBytes === 'number') query.limitBytes = limitBytes;
  return query;
}

/** The kept lines a request reads before following: since, then the last tailLines of those. */
export function selectLines(lines: readonly LogLine[], query: LogQuery): LogLine[] {
  let selected = query.since === undefined ? [...lines] : lines.filter((l) => l.nanos >= query.since!);
  if (query.tailLines !== undefined) selected = query.tailLines === 0 ? [] : selected.slice(-query.tailLines);
  return selected;
}

export function formatLine(line: LogLine, query: Pick<LogQuery, 'timestamps'>): string {
  return `${query.timestamps ? `${formatNanos(line.nanos)} ` : ''}${line.text}\n`;
}

/** Finds a container's log: a string is the error (404). */
export type LogLookup = (namespace: string, pod: string, container: string) => ContainerLog | string;

/** Writes lines until limitBytes is reached; returns false once it is (the response is then ended). */
class LimitedWriter {
  private left: number;
  private readonly res: ServerResponse;
  constructor(res: ServerResponse, limit: number | undefined) {
    this.res = res;
    this.left = limit ?? Infinity;
  }
  write(text: string): boolean {
    if (this.left <= 0) return false;
    const buf = Buffer.from(text);
    if (buf.length <= this.left) {
      this.left -= buf.length;
      this.res.write(buf);
    } else {
      this.res.write(buf.subarray(0, this.left));
      this.left = 0;
    }
    return this.left > 0;
  }
}

export function handleLogRequest(req: IncomingMessage, res: ServerResponse, lookup: LogLookup, now: () => bigint): void {
  const url = new URL(req.url ?? '/', 'https://node');
  if (url.pathname === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
  if (!m || req.method !== 'GET') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
    return;
  }
  const [namespace, pod, container] = [m[1]!, m[2]!, m[3]!].map(decodeURIComponent) as [string, string, string];
  const query = parseLogQuery(url.searchParams, now());
  if (typeof query === 'string') {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(query);
    return;
  }
  const log = lookup(namespace, pod, container);
  if (typeof log === 'string') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end(log);
    return;
  }
  const writer = new LimitedWriter(res, query.limitBytes);
  let ended = false;
  const follower: Follower = {
    line: (l) => {
      if (ended) return;
      if (!writer.write(formatLine(l, query))) finish();
    },
    end: () => finish(),
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    log.unfollow(follower);
    res.end();
  };
  const lines = log.read(query.previous, query.follow ? follower : undefined);
  if (lines === undefined) {
    res
      .writeHead(400, { 'content-type': 'text/plain' })
      .end(query.previous ? `previous terminated container "${container}" in pod "${pod}" not found` : `container "${container}" in pod "${pod}" is waiting to start`);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
  for (const line of selectLines(lines, query)) {
    if (!writer.write(formatLine(line, query))) {
      finish();
      return;
    }
  }
  if (!query.follow) {
    finish();
    return;
  }
  // A client that goes away stops the follow.
  res.once('close', () => finish());
}

export interface LogServerOptions {
  host: string;
  port: number;
  caFile: string;
  certFile: string;
  keyFile: string;
  lookup: LogLookup;
  now: () => bigint;
}

export async function startLogServer(opts: LogServerOptions): Promise<https.Server> {
  const server = https.createServer(
    {
      ca: readFileSync(opts.caFile),
      cert: readFileSync(opts.certFile),
      key: readFileSync(opts.keyFile),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      try {
        handleLogRequest(req, res, opts.lookup, opts.now);
      } catch (err) {
        // A malformed request (a bad %-escape) must never take the node's pods down with the agent.
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(String((err as Error).message));
      }
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return server;
}
