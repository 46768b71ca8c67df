// One entry point from a LoadSpec to the generator that carries it out, so the runner does not
// need to know which generators exist. Every generator records into the Recorder and returns a
// summary the validity check `loadHeld` can judge.

import type { LoadSpec } from '../model/load.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { Provider, ProviderCapabilities } from '../providers/provider.ts';
import type { LeftoverTracker } from '../state/run-record.ts';
import { driverMisfit, type LoadDriver } from './drivers.ts';
import { startHeyLoad } from './external/hey.ts';
import { startIperf3Load } from './external/iperf3.ts';
import type { NameHeaders } from './http1-response.ts';
import { startHttpLoad, type LoadSummary } from './http.ts';
import { startLaggingNodeLoad } from './lagging-node.ts';
import type { OwnConnections } from './own-connection.ts';
import { startGrpcLoad } from './grpc.ts';
import { startHttp2Load } from './http2.ts';
import { startSseLoad } from './sse.ts';
import { startTcpStreamLoad } from './tcp-stream.ts';
import { startTurnLoad } from './turn/transport.ts';
import { startUdpLoad, type PacketLoadSummary } from './udp.ts';
import { startWebSocketLoad } from './websocket.ts';

export type AnyLoadSummary = LoadSummary | PacketLoadSummary;

export interface AnyLoadHandle {
  readonly id: string;
  stop(): Promise<AnyLoadSummary>;
}

export function startLoad(
  id: string,
  spec: LoadSpec,
  provider: Pick<Provider, 'serviceAddress' | 'peerAddress' | 'pods' | 'podAddress'> & { readonly capabilities?: Pick<ProviderCapabilities, 'serviceConnectionRecords'> },
  recorder: Recorder,
  signal: AbortSignal,
  // tracker: the run's state record, for the external drivers only: they are processes of their
  // own that a SIGKILLed run leaves behind (external/client-group.ts); the built-in generators run
  // inside the harness and end with it.
  // names: the headers the Service's pods name themselves with (runner/attribution.ts).
  options: { driver?: LoadDriver; plannedMs?: number; tracker?: LeftoverTracker; names?: NameHeaders } = {},
): AnyLoadHandle {
  const driver = options.driver ?? 'builtin';
  const names = options.names ? { names: options.names } : {};
  if (driver !== 'builtin') {
    // Never fall back to the built-in generator: a cross-check that silently did not run agrees.
    const misfit = driverMisfit(driver, spec);
    if (misfit !== undefined) throw new Error(`load ${id}: ${misfit}`);
    if (spec.kind === 'single') recorder.event('note', { message: `load ${id}: one request, sent by the built-in client beside ${driver}`, detail: { load: id, driver: 'builtin' } });
    if (spec.kind === 'lagging-node') recorder.event('note', { message: `load ${id}: a lagging node's connections to each deleted pod, sent by the built-in client beside ${driver}`, detail: { load: id, driver: 'builtin' } });
    const plannedMs = options.plannedMs ?? 10_000;
    const tracking = options.tracker ? { tracker: options.tracker } : {};
    if (spec.kind === 'http' && driver === 'hey') return startHeyLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, plannedMs, ...tracking });
    if (spec.kind === 'udp' && driver === 'iperf3') return startIperf3Load(id, spec, provider.serviceAddress(spec.service, spec.port), recorder, { signal, ...tracking });
  }
  switch (spec.kind) {
    case 'udp':
      return startUdpLoad(id, spec, provider.serviceAddress(spec.service, spec.port), recorder, { signal });
    case 'turn': {
      const server = provider.serviceAddress(spec.service, spec.port);
      // The relay sends to the peer from inside the cluster: its in-cluster address where the
      // provider has one (a ClusterIP), the harness's own otherwise (local pods share its network).
      const service = provider.peerAddress?.(spec.peerService, spec.peerPort) ?? provider.serviceAddress(spec.peerService, spec.peerPort);
      const peers = spec.peerPods
        ? provider
            .pods(spec.peerPods.workload)
            .filter((p) => p.phase === 'Running' && p.ready)
            .map((p) => ({ address: p.ip, port: spec.peerPods!.port }))
        : [{ address: service.host, port: service.port }];
      if (peers.length === 0) throw new Error(`load ${id}: workload ${spec.peerPods?.workload} has no ready pod to be the TURN peer`);
      return startTurnLoad(id, spec, { address: server.host, port: server.port }, peers, recorder, { signal });
    }
    case 'http2':
      return startHttp2Load(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...names, ...ownConnections(provider, spec.service) });
    case 'tcp-stream':
      return startTcpStreamLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...ownConnections(provider, spec.service) });
    case 'websocket':
      return startWebSocketLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...ownConnections(provider, spec.service) });
    case 'sse':
      return startSseLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...ownConnections(provider, spec.service) });
    case 'grpc':
      return startGrpcLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...names, ...ownConnections(provider, spec.service) });
    case 'lagging-node':
      return startLaggingNodeLoad(id, spec, provider, recorder, { signal, ...names });
    case 'http':
    case 'single':
      return startHttpLoad(id, spec, provider.serviceAddress(spec.service), recorder, { signal, ...names, ...ownConnections(provider, spec.service) });
  }
}

/** A provider whose Service balancer records no connections (a cluster): the load records its own. */
function ownConnections(provider: { readonly capabilities?: Pick<ProviderCapabilities, 'serviceConnectionRecords'> }, service: string): { clientConnections?: OwnConnections } {
  return provider.capabilities !== undefined && provider.capabilities.serviceConnectionRecords !== true ? { clientConnections: { service } } : {};
}
