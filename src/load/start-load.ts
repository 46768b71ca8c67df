// One entry point from a LoadSpec to the generator that carries it out, so the runner does not
// need to know which generators exist. Every generator records into the Recorder and returns a
// summary the validity check `loadHeld` can judge.

import type { LoadSpec } from '../model/load.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { Provider } from '../providers/provider.ts';
import { startHttpLoad, type LoadSummary } from './http.ts';
import { startHttp2Load } from './http2.ts';
import { startTcpStreamLoad } from './tcp-stream.ts';
import { startTurnLoad } from './turn/transport.ts';
import { startUdpLoad, type PacketLoadSummary } from './udp.ts';

export type AnyLoadSummary = LoadSummary | PacketLoadSummary;

export interface AnyLoadHandle {
  readonly id: string;
  stop(): Promise<AnyLoadSummary>;
}

export function startLoad(
  id: string,
  spec: LoadSpec,
  provider: Pick<Provider, 'serviceAddress'>,
  recorder: Recorder,
  signal: AbortSignal,
): AnyLoadHandle {
  switch (spec.kind) {
    case 'udp':
      return startUdpLoad(id, spec, provider.serviceAddress(spec.service, spec.port), recorder, { signal });
    case 'turn': {
      const server = provider.serviceAddress(spec.service, spec.port);
      const peer = provider.serviceAddress(spec.peerService, spec.peerPort);
      return startTurnLoad(id, spec, { address: server.host, port: server.port }, { address: peer.host, port: peer.port }, recorder, { signal });
    }
    case 'http2':
      return startHttp2Load(id, spec, provider.serviceAddress(spec.service), recorder, { signal });
    case 'tcp-stream':
      return startTcpStreamLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal });
    case 'http':
    case 'single':
      return startHttpLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal });
  }
}
