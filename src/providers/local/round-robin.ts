// The Service balancer's round robin over the endpoints new connections and new UDP flows may go to.
// One counter per Service, shared by its TCP listeners on the main thread and its UDP ports in their
// worker threads (udp-balancer-worker.ts), so that a Service's new connections and new flows take
// turns exactly as they would through one counter.

export class RoundRobin {
  /** Share it with a worker (postMessage / workerData) to pick from the same counter there. */
  readonly buffer: SharedArrayBuffer;
  private readonly counter: BigUint64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(BigUint64Array.BYTES_PER_ELEMENT)) {
    this.buffer = buffer;
    this.counter = new BigUint64Array(buffer, 0, 1);
  }

  /** The next target in turn, or undefined when there is none. Every call takes a turn. */
  pick<T>(targets: readonly T[]): T | undefined {
    if (targets.length === 0) return undefined;
    const turn = Atomics.add(this.counter, 0, 1n);
    return targets[Number(turn % BigInt(targets.length))];
  }
}
