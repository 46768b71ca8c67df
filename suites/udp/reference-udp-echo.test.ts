// The reference UDP echo as a real process: the packet format, and each DRAIN_MODE's behaviour at
// SIGTERM, the UDP twin of suites/reference-backend.test.ts.

import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';
import { killChildren } from '../helpers/children.ts';

import { packetAsker } from '../../src/load/udp-ask.ts';

const SCRIPT = fileURLToPath(new URL('../../fixtures/reference-udp-echo.mjs', import.meta.url));
const children: ChildProcess[] = [];
const sockets: dgram.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  await killChildren(children);
});

async function startEcho(mode: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, POD_IP: '127.0.0.1', PORT: '0', HEALTH_PORT: '0', POD_NAME: `udp-${mode}`, DRAIN_MODE: mode, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: { ev: string; port?: number; healthPort?: number }[] = [];
  const listening = new Promise<{ port: number; healthPort: number }>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      const line = JSON.parse(text) as { ev: string; port: number; healthPort: number };
      lines.push(line);
      if (line.ev === 'listening') resolve(line);
    });
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const { port, healthPort } = await listening;
  const socket = dgram.createSocket('udp4');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const asker = packetAsker(socket, { host: '127.0.0.1', port }, { token: 9, size: 64, sentAt: 1 });
  const ask = (timeoutMs = 300) => asker(timeoutMs);
  return { child, lines, exited, ask, healthPort };
}

describe('reference UDP echo', () => {
  it('echoes the packet format with its pod name, and answers the readiness probe', async () => {
    const echo = await startEcho('graceful');
    expect(await echo.ask()).toBe('udp-graceful');
    const res = await fetch(`http://127.0.0.1:${echo.healthPort}/healthz`);
    expect(res.status).toBe(200);
  });

  it('graceful: keeps echoing after SIGTERM and exits 0 once idle', async () => {
    const echo = await startEcho('graceful', { DRAIN_IDLE_MS: '300' });
    echo.child.kill('SIGTERM');
    const sigterm = performance.now();
    for (let i = 0; i < 4; i++) {
      expect(await echo.ask()).toBe('udp-graceful');
      await delay(100);
    }
    const exit = await echo.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - sigterm).toBeGreaterThanOrEqual(600);
    expect(echo.lines.at(-1)).toMatchObject({ ev: 'exit', echoed: 4 });
  });

  it('graceful with DRAIN_TIMEOUT_MS: exits on time even while traffic flows', async () => {
    const echo = await startEcho('graceful', { DRAIN_TIMEOUT_MS: '300', DRAIN_IDLE_MS: '5000' });
    echo.child.kill('SIGTERM');
    const stop = AbortSignal.timeout(3000);
    while (echo.child.exitCode === null && !stop.aborted) await echo.ask(50);
    expect((await echo.exited).code).toBe(0);
  });

  it('refuse-after-sigterm: stops echoing at SIGTERM but stays alive a while', async () => {
    const echo = await startEcho('refuse-after-sigterm', { DRAIN_IDLE_MS: '500' });
    echo.child.kill('SIGTERM');
    await delay(50);
    expect(await echo.ask(200)).toBeUndefined();
    expect(echo.child.exitCode).toBeNull();
    expect((await echo.exited).code).toBe(0);
  });

  it('exit-on-sigterm: dies at once; hang-until-killed: ignores SIGTERM', async () => {
    const dies = await startEcho('exit-on-sigterm');
    dies.child.kill('SIGTERM');
    expect((await dies.exited).signal).toBe('SIGTERM');
    const hangs = await startEcho('hang-until-killed', { DRAIN_IDLE_MS: '50' });
    hangs.child.kill('SIGTERM');
    await delay(300);
    expect(await hangs.ask()).toBe('udp-hang-until-killed');
    expect(hangs.child.exitCode).toBeNull();
  });
});
