// What traffic a scenario drives. Plain data: the generators in src/load/ carry it out.

export interface HttpLoadSpec {
  kind: 'http';
  /** Service to send to (the harness connects to its address). */
  service: string;
  path: string;
  keepAlive: boolean;
  /**
   * open: requests start at a fixed total rate regardless of responses, over up to `connections`
   * sockets. closed: `connections` workers each send back to back, each at most `ratePerWorker`/s
   * (the shape of `hey -c 100 -q 10`).
   */
  mode: 'open' | 'closed';
  connections: number;
  /** open mode: requests per second in total. */
  rate?: number;
  /** closed mode: per worker cap, requests per second; undefined means as fast as possible. */
  ratePerWorker?: number;
  /**
   * closed mode without a cap: the rate each worker must reach for the load to count as held. An
   * unpaced load is there to keep its connections busy; one that fell below this (a slow machine, a
   * lagging harness) did not, and what it measured is not the system's (validity `loadHeld`).
   */
  heldRatePerWorker?: number;
  /**
   * closed mode: each worker waits this long on a timer between a response and its next request (a
   * client's think time). A timer, not the response's callback: a close that reached the client
   * while it was thinking is seen only after the timer has sent the next request, as with a real
   * client whose request crosses the server's FIN on the wire.
   */
  thinkMs?: number;
  /**
   * Each request a POST carrying this many bytes, rather than a GET: a request that is not
   * idempotent, which no client or proxy may send again on its own (RFC 9110 section 9.2.2), so
   * that a proxy that retries a GET its backend closed under it cannot hide the close.
   */
  postBytes?: number;
  /** Per request timeout. A request slower than this is a `timeout`. */
  timeoutMs: number;
  /**
   * Which statuses count as answered: unset, any below 500 (a backend of one's own may answer 404 to
   * a path it does not serve); `2xx`, only those, every other a failure of class `status`. The loads
   * of a gateway scenario say `2xx`: their backends are the reference app, which answers every
   * request they send with a 2xx, so any other status is the gateway answering for itself (a 404
   * while it has no route) and the request never reached a backend.
   */
  okStatus?: '2xx';
}

/** A single request issued at a point in the run, such as the long request of backend-long-request. */
export interface SingleRequestSpec {
  kind: 'single';
  service: string;
  path: string;
  timeoutMs: number;
  /** As HttpLoadSpec's. */
  okStatus?: '2xx';
}

/**
 * What a node whose proxy has not yet deprogrammed a deleted pod sends it. kube-proxy applies an
 * endpoint change on each node at that node's own sync, up to seconds apart; the harness reaches a
 * Service through one path, which may deprogram the pod at once. From each delete of a pod of
 * `workload` until `windowMs` after it (the Service's programming delay and spread), `rate` new
 * connections a second go straight to the pod's own address and the Service's target port, one
 * request each: a pod that stops accepting before every node has deprogrammed it refuses them, on a
 * cluster of any size as on the model. Where the harness cannot reach pods directly (kind's Docker
 * network, a chart's or a class's dataplane) nothing is sent, and a note says so.
 */
export interface LaggingNodeSpec {
  kind: 'lagging-node';
  /** The Service whose deprogramming lags; its pods are those of `workload`. */
  service: string;
  workload: string;
  path: string;
  rate: number;
  windowMs: number;
  timeoutMs: number;
  /** As HttpLoadSpec's. */
  okStatus?: '2xx';
}

/**
 * HTTP/2 over cleartext with prior knowledge (h2c, RFC 9113 section 3.3): `sessions` pooled
 * connections, each carrying up to `streamsPerSession` concurrent streams sent back to back, each
 * stream slot at most `ratePerStream` per second. After GOAWAY a session takes no new stream and a
 * fresh one replaces it, as a well-behaved client does; nothing is ever retried.
 */
export interface Http2LoadSpec {
  kind: 'http2';
  service: string;
  path: string;
  sessions: number;
  streamsPerSession: number;
  ratePerStream?: number;
  timeoutMs: number;
  /** As HttpLoadSpec's. */
  okStatus?: '2xx';
}

/**
 * Long-lived UDP flows (src/load/udp.ts): `flows` client sockets, each sending `ratePerFlow`
 * sequence-numbered packets per second for `durationMs`, every one echoed back by the backend.
 */
export interface UdpLoadSpec {
  kind: 'udp';
  service: string;
  /** ServicePort name; the Service's first port when omitted. */
  port?: string;
  flows: number;
  ratePerFlow: number;
  /** Each flow sends for this long and then stops by itself. */
  durationMs: number;
  /** Datagram size, at least the packet header (src/load/udp.ts). */
  payloadBytes: number;
  /** How long after its send a packet's echo may still arrive; later it counts as lost. */
  replyTimeoutMs: number;
}

/**
 * Long-lived TCP streams (src/load/tcp-stream.ts) to an echo service speaking the line protocol of
 * fixtures/reference-stream-echo.mjs: `streams` connections, each sending sequence-numbered messages
 * at `ratePerStream` per second and expecting each echoed. A stream whose outstanding message gets
 * no echo for `stallMs` is a stall. With `reopen`, a stream the backend closed is replaced by a new
 * one (a new connection, never a resend).
 */
export interface TcpStreamLoadSpec {
  kind: 'tcp-stream';
  service: string;
  streams: number;
  ratePerStream: number;
  stallMs: number;
  reopen: boolean;
}

/**
 * Long-lived WebSocket streams (src/load/websocket.ts) to `/echo` of the Service, as
 * fixtures/reference-stream-app.mjs serves it: `streams` connections, each sending sequence-numbered
 * text messages at `ratePerStream` per second and expecting each echoed. The backend names itself in
 * its handshake response (`x-zerodrop-pod`); a draining backend closes with 1001 (going away) after
 * echoing what it received. With `reopen`, a stream the backend closed so is replaced by a new one.
 */
export interface WebSocketLoadSpec {
  kind: 'websocket';
  service: string;
  streams: number;
  ratePerStream: number;
  stallMs: number;
  reopen: boolean;
  /**
   * Bounded streams: each stream sends this many messages, closes itself with 1000 once all are
   * echoed, and a new stream takes its place, so that streams keep starting and ending through the
   * run. The first streams' starts are spread over one stream's length, so that their ends are too.
   * Unbounded (each stream runs until its backend or the load ends it) when absent.
   */
  messagesPerStream?: number;
}

/**
 * Server-Sent Events streams (src/load/sse.ts) from `/events?rate=N` of the Service: each of
 * `streams` clients receives events numbered by their `id`, `ratePerStream` per second. A draining
 * backend ends the body cleanly after a `retry` hint; with `reopen` the client then reconnects after
 * that many milliseconds with `Last-Event-ID`, and the next event must be the one after it.
 */
export interface SseLoadSpec {
  kind: 'sse';
  service: string;
  streams: number;
  ratePerStream: number;
  stallMs: number;
  reopen: boolean;
  /** Bounded streams: each stream is closed by the client once this many events have arrived, and a new one (from the first event) takes its place; see WebSocketLoadSpec. */
  messagesPerStream?: number;
}

/**
 * Packet flows through a TURN server (src/load/turn/transport.ts): each flow is one allocation made
 * through the `service` (the TURN gateway) with long-term credentials, one channel bound to the
 * `peerService` address (the UDP echo backends), and the packets of src/load/udp.ts carried as
 * ChannelData, with the same per-packet accounting as a `udp` load.
 */
export interface TurnLoadSpec extends Omit<UdpLoadSpec, 'kind'> {
  kind: 'turn';
  /** Service whose address is the TURN peer (the relay sends there). */
  peerService: string;
  peerPort?: string;
  /**
   * Peers are the pods of this workload, not the Service: flow i relays to the i-th of its ready
   * pods (in turn) at their own address and `port`, as a media server's own address reaches a TURN
   * client in its ICE candidates. A relay that filters peers by the backends it discovered then
   * decides, per pod, whether the flow still gets through (STUNner's peer check, seed 000).
   */
  peerPods?: { workload: string; port: number };
  username: string;
  password: string;
}

/**
 * gRPC over cleartext HTTP/2 (src/load/grpc.ts) to the service of fixtures/drain.proto, on
 * @grpc/grpc-js with retries off: `channels` channels, each with a connection of its own. On each
 * channel one unary call at a time, at most `unaryRatePerChannel` per second (a closed loop with a
 * rate cap), each answered after `unaryMs`; beside them `streams` server-streaming calls (spread
 * round robin over the channels), each asking for `messagesPerStream` sequence-numbered messages
 * one every `messageIntervalMs`, and followed by a new call when it ends. Each call's deadline is
 * its expected length plus `timeoutMs`. With `spreadFirstStreams` the first streams start spread
 * over one stream's length, so that streams end and begin all through the run (the gateway stream
 * scenarios' bounded streams), not all at once.
 */
export interface GrpcLoadSpec {
  kind: 'grpc';
  service: string;
  channels: number;
  unaryRatePerChannel: number;
  unaryMs: number;
  streams: number;
  messagesPerStream: number;
  messageIntervalMs: number;
  timeoutMs: number;
  spreadFirstStreams?: boolean;
}

export type LoadSpec = HttpLoadSpec | SingleRequestSpec | LaggingNodeSpec | Http2LoadSpec | UdpLoadSpec | TcpStreamLoadSpec | WebSocketLoadSpec | SseLoadSpec | TurnLoadSpec | GrpcLoadSpec;

/** The loads of long-lived streams, recorded one StreamRecord per stream. */
export type StreamLoadSpec = TcpStreamLoadSpec | WebSocketLoadSpec | SseLoadSpec;
