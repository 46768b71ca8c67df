// Test support: a client flow on a bound UDP socket that sends one packet of the format of udp.ts
// at a time and tells which pod echoed it, for the tests of the reference UDP apps and the local
// Service balancer. It waits for each answer once, bounded: a lost packet is `undefined`, never resent.

import type dgram from 'node:dgram';
import { decodePacket, encodePacket, PACKET_HEADER_BYTES } from './udp.ts';

export interface AskOptions {
  token: number;
  /** Datagram size in bytes (the packet header when omitted). */
  size?: number;
  sentAt?: number;
}

/** Returns `ask(timeoutMs)`: sends the next sequence number to host:port and resolves with the echoing pod, or undefined after timeoutMs. */
export function packetAsker(socket: dgram.Socket, target: { host: string; port: number }, o: AskOptions) {
  let seq = 0;
  const waiting = new Map<number, (pod: string | undefined) => void>();
  socket.on('message', (msg) => {
    const p = decodePacket(msg);
    if (p) waiting.get(p.seq)?.(p.pod);
  });
  return (timeoutMs: number): Promise<string | undefined> =>
    new Promise((resolve) => {
      const s = seq++;
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      waiting.set(s, (pod) => {
        clearTimeout(timer);
        resolve(pod);
      });
      socket.send(encodePacket({ token: o.token, flow: 0, seq: s, sentAt: o.sentAt ?? 0 }, o.size ?? PACKET_HEADER_BYTES), target.port, target.host);
    });
}
