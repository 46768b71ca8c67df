// Starts a reference app (fixtures/*.mjs) as a plain process for the load generators' own tests:
// the generator meets the wire behaviour of a real drain, without a provider in between.

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { StreamRecord } from '../src/model/timeline.ts';
import { Recorder } from '../src/observe/recorder.ts';
import type { LoadHandle, LoadTarget } from '../src/load/http.ts';

export interface FixtureApp {
  child: ChildProcess;
  port: number;
  exited: Promise<unknown>;
}

const started: ChildProcess[] = [];

/** Starts `fixtures/<script>` on a free port of 127.0.0.1 and resolves once it listens. */
export async function startFixtureApp(script: string, mode: string, env: Record<string, string> = {}): Promise<FixtureApp> {
  const path = fileURLToPath(new URL(`../fixtures/${script}`, import.meta.url));
  const child = spawn(process.execPath, [path], {
    env: { ...process.env, POD_IP: '127.0.0.1', PORT: '0', POD_NAME: `app-${mode}`, DRAIN_MODE: mode, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 5000);
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

/** Kills every app still running (afterEach). */
export function killFixtureApps(): void {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * Runs a stream load against `app`, sends the app `signal` after `beforeMs` (and, for SIGTERM, waits
 * for it to exit), lets `afterMs` pass, stops the load and returns the streams it recorded.
 */
export async function streamsAcross(
  app: FixtureApp,
  start: (target: LoadTarget, recorder: Recorder) => LoadHandle,
  signal: 'SIGTERM' | 'SIGSTOP',
  o: { beforeMs: number; afterMs: number },
): Promise<StreamRecord[]> {
  const recorder = new Recorder();
  const load = start({ host: '127.0.0.1', port: app.port }, recorder);
  await delay(o.beforeMs);
  app.child.kill(signal);
  if (signal === 'SIGTERM') await app.exited;
  await delay(o.afterMs);
  await load.stop();
  return recorder.timeline.streams ?? [];
}
