// Test helpers: a coturn process started directly on a loopback address (not through a provider),
// and a UDP echo peer. Not used at run time.

import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { coturnArgs, coturnCredentialEnv, coturnScript, RELAY_PORTS, TURN_PASSWORD, TURN_USER } from '../src/profiles/coturn.ts';
import { TurnClient } from '../src/load/turn/client.ts';
import type { TransportAddress } from '../src/load/turn/stun.ts';

export interface Coturn {
  address: TransportAddress;
  child: ChildProcess;
  output: string[];
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export async function startCoturn(ip: string, port = 3478): Promise<Coturn> {
  const child = spawn('sh', ['-c', coturnScript(coturnArgs({ ip, port, ...RELAY_PORTS }))], {
    env: { ...process.env, ...coturnCredentialEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const s of [child.stdout, child.stderr]) s?.on('data', (d: Buffer) => output.push(...d.toString().split('\n').filter(Boolean)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const address = { address: ip, port };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  // Ready once it answers a Binding request; bounded.
  const deadline = performance.now() + 10_000;
  for (;;) {
    const probe = await TurnClient.open({ server: address, username: TURN_USER, password: TURN_PASSWORD, localAddress: ip, requestTimeoutMs: 200 });
    try {
      await probe.binding();
      return { address, child, output, exited, stop };
    } catch (err) {
      if (performance.now() > deadline || child.exitCode !== null) {
        await stop();
        throw new Error(`coturn did not answer on ${ip}:${port}: ${String(err)}\n${output.slice(-20).join('\n')}`, { cause: err });
      }
    } finally {
      probe.destroy();
    }
  }
}

/** A UDP socket that sends every datagram back to where it came from. */
export async function startUdpEcho(ip: string): Promise<{ address: TransportAddress; close(): void }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, rinfo) => socket.send(msg, rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => socket.bind({ address: ip, port: 0 }, resolve));
  return { address: { address: ip, port: socket.address().port }, close: () => socket.close() };
}
