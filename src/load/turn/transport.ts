// The TURN transport of the packet load (src/load/udp.ts): each flow is one TURN allocation made
// through the gateway Service with long-term credentials, with one channel bound to the peer (the
// UDP echo backends' Service), and the load's packets carried as ChannelData both ways. The packet
// load does the per-packet accounting exactly as for plain UDP; this adds one AllocationRecord per
// flow: whether the allocation succeeded, and whether the server still answered when it was deleted.
//
// A failed allocation does not stop the load: its flow still "sends" on schedule into nothing, so
// every packet of it counts as lost, and its AllocationRecord says why (timeout, rejected with the
// STUN error code). Nothing is retried.

import type { TurnLoadSpec } from '../../model/load.ts';
import type { AllocationRecord } from '../../model/timeline.ts';
import type { Recorder } from '../../observe/recorder.ts';
import { errorMessage } from '../outcome.ts';
import { startUdpLoad, type FlowTransportFactory, type PacketLoadHandle } from '../udp.ts';
import { TurnClient, TurnError } from './client.ts';
import { MIN_CHANNEL, type TransportAddress } from './stun.ts';

export interface TurnTransportOptions {
  load: string;
  /** The TURN server: the gateway Service's address. */
  server: TransportAddress;
  /** Where the relay sends the packets: the echo backends' Service address, or their pods' (flow i to peers[i % n]). */
  peers: readonly TransportAddress[];
  username: string;
  password: string;
  recorder: Recorder;
  requestTimeoutMs?: number;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 1_000;

export function turnTransport(o: TurnTransportOptions): FlowTransportFactory {
  return async (ctx) => {
    const client = await TurnClient.open({
      server: o.server,
      username: o.username,
      password: o.password,
      // No localAddress: the client binds the kernel's source address for the server (127.0.0.1 for
      // a loopback server), since a 127.0.0.1-bound socket cannot reach a netns cluster's node.
      requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
    const onAbort = () => client.destroy();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const start = o.recorder.now();
    const peer = o.peers[ctx.flow % o.peers.length]!;
    const record: AllocationRecord = { load: o.load, flow: ctx.flow, localPort: client.localPort, start, end: start, outcome: 'ok', peer: `${peer.address}:${peer.port}` };
    // Each allocation has its own channel number space (RFC 8656 §12): the first one will do.
    const channel = MIN_CHANNEL;
    let usable = false;
    client.onData((data) => ctx.onDatagram(data));
    try {
      const allocation = await client.allocate();
      record.relayed = `${allocation.relayed.address}:${allocation.relayed.port}`;
      await client.channelBind(channel, peer);
      usable = true;
    } catch (err) {
      if (err instanceof TurnError && typeof err.code === 'number') {
        record.outcome = 'rejected';
        record.code = err.code;
      } else {
        record.outcome = err instanceof TurnError && err.code === 'ZERODROP_TIMEOUT' ? 'timeout' : 'error';
      }
      record.error = errorMessage(err);
    }
    record.end = o.recorder.now();
    o.recorder.allocation(record);
    return {
      localPort: client.localPort,
      send: (packet) => {
        if (!usable) return;
        try {
          client.sendChannel(channel, packet);
        } catch {
          // The socket is closed: the packet is lost, which the accounting shows.
        }
      },
      close: async () => {
        ctx.signal.removeEventListener('abort', onAbort);
        if (usable && !ctx.signal.aborted) {
          try {
            await client.refresh(0);
            record.closed = 'deleted';
          } catch {
            record.closed = 'no-answer';
          }
        }
        client.destroy();
      },
    };
  };
}

/** A packet load whose flows are TURN allocations through `server` to `peers` (flow i to peers[i % n]). */
export function startTurnLoad(
  id: string,
  spec: TurnLoadSpec,
  server: TransportAddress,
  peers: readonly TransportAddress[],
  recorder: Recorder,
  opts: { signal?: AbortSignal } = {},
): PacketLoadHandle {
  if (peers.length === 0) throw new Error(`load ${id}: no TURN peer to relay to`);
  const { peerService: _peerService, peerPort: _peerPort, peerPods: _peerPods, username, password, ...packets } = spec;
  const transport = turnTransport({ load: id, server, peers, username, password, recorder });
  // The target is unused with a transport of its own; it names the server for the record.
  return startUdpLoad(id, { ...packets, kind: 'udp' }, { host: server.address, port: server.port }, recorder, { ...opts, transport });
}
