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
  /** Per request timeout. A request slower than this is a `timeout`. */
  timeoutMs: number;
}

/** A single request issued at a point in the run, such as the long request of backend-long-request. */
export interface SingleRequestSpec {
  kind: 'single';
  service: string;
  path: string;
  timeoutMs: number;
}

export type LoadSpec = HttpLoadSpec | SingleRequestSpec;
