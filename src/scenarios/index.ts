// The catalog, in the order `zerodrop list` and reports show it. Ids are stable: they name tests,
// report rows and CLI filters.

import backendDeleteGrpc from './backend-delete-grpc.ts';
import backendDeleteHttp from './backend-delete-http.ts';
import backendDeleteSse from './backend-delete-sse.ts';
import backendDeleteTcpStream from './backend-delete-tcp-stream.ts';
import backendDeleteWebsocket from './backend-delete-websocket.ts';
import backendIdleExit from './backend-idle-exit.ts';
import backendScaleToZeroUdp from './backend-scale-to-zero-udp.ts';
import backendScaleToZeroTurn from './backend-scale-to-zero-turn.ts';
import backendLongRequest from './backend-long-request.ts';
import backendRolloutHttp from './backend-rollout-http.ts';
import backendRolloutWebsocket from './backend-rollout-websocket.ts';
import backendRolloutSse from './backend-rollout-sse.ts';
import backendRolloutGrpc from './backend-rollout-grpc.ts';
import backendSigtermKeepsAccepting from './backend-sigterm-keeps-accepting.ts';
import forceDelete from './force-delete.ts';
import gatewayBackendRolloutHttp from './gateway-backend-rollout-http.ts';
import gatewayDeleteHttp from './gateway-delete-http.ts';
import gatewayDeleteHttpNoKeepalive from './gateway-delete-http-no-keepalive.ts';
import gatewayDeleteSse from './gateway-delete-sse.ts';
import gatewayDeleteGrpc from './gateway-delete-grpc.ts';
import gatewayDeleteTurn from './gateway-delete-turn.ts';
import gatewayDeleteWebsocket from './gateway-delete-websocket.ts';
import gatewayControllerRestartTurn from './gateway-controller-restart-turn.ts';
import gatewayHttp2Goaway from './gateway-http2-goaway.ts';
import gatewayReloadHttp from './gateway-reload-http.ts';
import gatewayReloadHttpNoKeepalive from './gateway-reload-http-no-keepalive.ts';
import gatewayRouteSwapHttp from './gateway-route-swap-http.ts';
import gatewayRolloutHttp from './gateway-rollout-http.ts';
import gatewayRolloutSse from './gateway-rollout-sse.ts';
import gatewayRolloutGrpc from './gateway-rollout-grpc.ts';
import gatewayRolloutWebsocket from './gateway-rollout-websocket.ts';
import gatewayScaleDown from './gateway-scale-down.ts';
import gatewayScaleDownSse from './gateway-scale-down-sse.ts';
import gatewayScaleDownGrpc from './gateway-scale-down-grpc.ts';
import gatewayScaleDownWebsocket from './gateway-scale-down-websocket.ts';
import gatewaySlowLb from './gateway-slow-lb.ts';
import nodeDrainHttp from './node-drain-http.ts';
import nodeDrainWebsocket from './node-drain-websocket.ts';
import nodeDrainSse from './node-drain-sse.ts';
import nodeDrainGrpc from './node-drain-grpc.ts';
import type { ScenarioDefinition } from './definition.ts';

export const catalog: readonly ScenarioDefinition[] = [
  backendDeleteHttp,
  backendRolloutHttp,
  backendSigtermKeepsAccepting,
  backendIdleExit,
  backendLongRequest,
  backendDeleteTcpStream,
  backendDeleteWebsocket,
  backendDeleteSse,
  backendRolloutWebsocket,
  backendRolloutSse,
  backendRolloutGrpc,
  backendDeleteGrpc,
  backendScaleToZeroUdp,
  backendScaleToZeroTurn,
  gatewayDeleteHttp,
  gatewayDeleteHttpNoKeepalive,
  gatewayRolloutHttp,
  gatewayScaleDown,
  gatewaySlowLb,
  gatewayBackendRolloutHttp,
  gatewayHttp2Goaway,
  gatewayDeleteWebsocket,
  gatewayDeleteSse,
  gatewayDeleteGrpc,
  gatewayRolloutWebsocket,
  gatewayRolloutSse,
  gatewayRolloutGrpc,
  gatewayScaleDownWebsocket,
  gatewayScaleDownSse,
  gatewayScaleDownGrpc,
  gatewayReloadHttp,
  gatewayReloadHttpNoKeepalive,
  gatewayRouteSwapHttp,
  gatewayDeleteTurn,
  gatewayControllerRestartTurn,
  nodeDrainHttp,
  nodeDrainWebsocket,
  nodeDrainSse,
  nodeDrainGrpc,
  forceDelete,
];

export function findScenario(id: string): ScenarioDefinition | undefined {
  return catalog.find((s) => s.id === id);
}
