// A load's own record of its connections, where no Service load balancer of the harness records
// them (a cluster, whose kube-proxy shows the harness none). Without these records, assertions about
// a pod's connections would see none where the pod held them: drainTiming would take a gateway that
// kept its connections to their ends for one idle since its minimum drain, and fail it for exiting
// late; a failed request could not be placed on the pod its connection reached.
import type { ConnectionRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';

/** Set on a load's options where it should record its own connections: the Service they go to. */
export interface OwnConnections {
  service: string;
}

/** Opens the record of a connection the load just made from `clientPort`, if it records its own. */
export function openOwnConnection(recorder: Recorder, own: OwnConnections | undefined, clientPort: number | undefined, openedAt: number): ConnectionRecord | undefined {
  if (own === undefined || clientPort === undefined) return undefined;
  const record = recorder.openConnection({ service: own.service, clientPort });
  record.open = openedAt;
  return record;
}

/** A response came on the connection: a connection goes to one pod for its life, so the first names it. */
export function ownConnectionAnswered(record: ConnectionRecord | undefined, pod: string | undefined): void {
  if (record === undefined || record.upstream !== 'open') return;
  record.upstream = 'ok';
  if (pod !== undefined) record.pod = pod;
}

/** The connection closed at `at`: one never answered reached no pod the load knows, and counts for none. */
export function closeOwnConnection(record: ConnectionRecord | undefined, at: number): void {
  if (record === undefined || record.close !== undefined) return;
  record.close = at;
  if (record.upstream === 'open') record.upstream = 'error';
}

/**
 * Records a stream that has ended (a TCP, WebSocket, SSE or gRPC stream) as a connection of the pod
 * it went through (the gateway first), as its client saw it. A stream no response named a pod for is
 * recorded with no pod, as a request never answered is.
 */
export function recordOwnStream(
  recorder: Recorder,
  own: OwnConnections | undefined,
  stream: { start: number; end: number; localPort?: number; gateway?: string; pod?: string },
): void {
  const record = openOwnConnection(recorder, own, stream.localPort ?? 0, stream.start);
  const pod = stream.gateway ?? stream.pod;
  if (pod !== undefined) ownConnectionAnswered(record, pod);
  closeOwnConnection(record, stream.end);
}
