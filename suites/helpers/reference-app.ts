// A reference app (fixtures/reference-*.mjs) run as a plain process for a generator's own tests, on
// a free port it announces in its `listening` line.

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ReferenceApp {
  child: ChildProcess;
  port: number;
  exited: Promise<unknown>;
}

/** Starts `fixtures/<app>` with `env` (POD_IP 127.0.0.1, PORT 0 unless given) and adds it to `children`. */
export async function startReferenceApp(app: string, env: Record<string, string>, children: ChildProcess[]): Promise<ReferenceApp> {
  const script = fileURLToPath(new URL(`../../fixtures/${app}`, import.meta.url));
  const child = spawn(process.execPath, [script], { env: { ...process.env, POD_IP: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${app} did not start`)), 5000);
    lines.on('line', (line) => {
      const ev = JSON.parse(line) as { ev: string; port?: number };
      if (ev.ev === 'listening' && ev.port !== undefined) {
        clearTimeout(timer);
        resolve(ev.port);
      }
    });
  });
  return { child, port, exited };
}
