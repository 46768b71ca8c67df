// The reference UDP relay as a real process against the local read-only API: it relays only to
// pods it discovered, keeps a terminating serving pod with EndpointSlices, drops it at once with
// legacy Endpoints, and re-lists after a 410 Expired.

import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { echoPacket } from '../../src/load/udp.ts';
import { packetAsker } from '../../src/load/udp-ask.ts';
import { Recorder } from '../../src/observe/recorder.ts';
import { LocalApiServer } from '../../src/providers/local/api-server.ts';
import { EndpointStore, type EndpointSource } from '../../src/providers/local/endpoints.ts';
import { endpointSource } from '../../test-support/local-provider.ts';

const SCRIPT = fileURLToPath(new URL('../../fixtures/reference-udp-relay.mjs', import.meta.url));
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function udpSocket(onMessage?: (socket: dgram.Socket, msg: Buffer, rinfo: dgram.RemoteInfo) => void) {
  const socket = dgram.createSocket('udp4');
  cleanups.push(() => socket.close());
  if (onMessage) socket.on('message', (msg, rinfo) => onMessage(socket, msg, rinfo));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

async function setup(discovery: 'endpointslices' | 'endpoints', history?: number) {
  // The backend: an echo on 127.0.0.1, listed as pod media-1.
  const echo = await udpSocket((s, msg, rinfo) => s.send(echoPacket(msg, 'media-1'), rinfo.port, rinfo.address));
  const service = { name: 'media', selector: 'media', ports: [{ name: 'udp', port: 9001, targetPort: echo.address().port, protocol: 'UDP' as const }], programmingDelayMs: 0 };
  const store = new EndpointStore(service, new Recorder());
  const api = new LocalApiServer({ host: '127.0.0.1', ...(history !== undefined ? { history } : {}) });
  await api.listen();
  api.addService(store);
  cleanups.push(() => api.close());
  const pod = (o: Partial<EndpointSource> = {}): EndpointSource => endpointSource('media-1', 'media', '127.0.0.1', o);
  store.sync(pod());

  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, ...api.env(), POD_IP: '127.0.0.1', PORT: '0', HEALTH_PORT: '0', POD_NAME: 'relay-1', POD_NAMESPACE: 'zerodrop', BACKEND_SERVICE: 'media', DISCOVERY: discovery },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  const lines: { ev: string; port?: number; peers?: { ip: string; ready: boolean }[] }[] = [];
  const listening = new Promise<number>((resolve) =>
    createInterface({ input: child.stdout! }).on('line', (text) => {
      const line = JSON.parse(text) as (typeof lines)[number];
      lines.push(line);
      if (line.ev === 'listening') resolve(line.port ?? 0);
    }),
  );
  const relayPort = await listening;
  const asker = packetAsker(await udpSocket(), { host: '127.0.0.1', port: relayPort }, { token: 1 });
  const ask = (timeoutMs = 300) => asker(timeoutMs);
  const discovered = async (ok: (peers: { ip: string; ready: boolean }[]) => boolean) => {
    for (let i = 0; i < 100; i++) {
      const last = lines.filter((l) => l.ev === 'discovered').at(-1);
      if (last?.peers && ok(last.peers)) return;
      await delay(20);
    }
    throw new Error(`relay never discovered the expected peers: ${JSON.stringify(lines)}`);
  };
  await discovered((p) => p.length === 1);
  return { store, api, pod, ask, lines, discovered };
}

describe('reference UDP relay', () => {
  it('EndpointSlices: keeps relaying to a terminating, serving pod; stops once it is gone', async () => {
    const { store, pod, ask, discovered, lines } = await setup('endpointslices');
    expect(await ask()).toBe('media-1');
    store.sync(pod({ terminating: true }));
    await discovered((p) => p.length === 1 && p[0]?.ready === false);
    expect(await ask()).toBe('media-1');
    store.sync(pod({ terminating: true, exited: true }));
    await discovered((p) => p.length === 0);
    expect(await ask()).toBeUndefined();
    expect(lines.some((l) => l.ev === 'prohibited')).toBe(true);
  });

  it('legacy Endpoints: drops a terminating pod at once (STUNner #138)', async () => {
    const { store, pod, ask, discovered } = await setup('endpoints');
    expect(await ask()).toBe('media-1');
    store.sync(pod({ terminating: true }));
    await discovered((p) => p.length === 0);
    expect(await ask()).toBeUndefined();
  });

  it('re-lists after its watch is answered with 410 Expired', async () => {
    const { store, api, pod, ask, discovered, lines } = await setup('endpointslices', 2);
    // The watch ends; before the relay resumes, more changes happen than the history keeps.
    api.closeWatches();
    store.sync(pod({ ready: false }));
    store.sync(pod());
    store.sync(pod({ terminating: true }));
    await discovered((p) => p.length === 1 && p[0]?.ready === false);
    expect(lines.find((l) => l.ev === 'relist')).toMatchObject({ code: 410, reason: 'Expired' });
    expect(await ask()).toBe('media-1');
  });
});
