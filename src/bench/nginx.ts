// One nginx worker serving a small static 200 on a loopback address, in a temporary directory of
// its own: the common target of the HTTP generators compared by the benchmark. `worker_processes 1`
// so that the server side costs one core, whatever the client; `return 200` serves from memory
// (https://nginx.org/en/docs/http/ngx_http_rewrite_module.html#return); keep-alive connections
// are never closed by the server during a run (keepalive_requests, keepalive_timeout).

import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServerProcess } from './server-process.ts';

export interface NginxTarget extends AsyncDisposable {
  host: string;
  port: number;
  url: string;
}

/** A free TCP port on `host`, as the kernel hands it out. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function waitForListen(host: string, port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect({ host, port }, () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > until) reject(new Error(`nginx did not listen on ${host}:${port} within ${deadlineMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

export function nginxConfig(dir: string, host: string, port: number): string {
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
  return `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen ${host}:${port} backlog=4096;
    location / { default_type text/plain; return 200 "ok\\n"; }
  }
}
`;
}

export async function startNginx(host: string, cwd: string): Promise<NginxTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'zerodrop-bench-nginx-'));
  for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, name));
  const port = await freePort(host);
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, host, port));
  // SIGQUIT is nginx's graceful stop (https://nginx.org/en/docs/control.html).
  const server = startServerProcess(['nginx', '-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { cwd, stopSignal: 'SIGQUIT', dir });
  try {
    await waitForListen(host, port, 5_000);
  } catch (error) {
    await server[Symbol.asyncDispose]();
    throw error;
  }
  return { host, port, url: `http://${host}:${port}/`, [Symbol.asyncDispose]: () => server[Symbol.asyncDispose]() };
}
