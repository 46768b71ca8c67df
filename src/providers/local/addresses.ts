// Pod and Service addresses for the local provider.
//
// In Kubernetes every pod has its own IP, so every replica listens on the same containerPort and a
// Service has its own ClusterIP (https://kubernetes.io/docs/concepts/services-networking/#the-kubernetes-network-model).
// On Linux the whole of 127.0.0.0/8 is routed to the loopback interface, so the local provider gives
// each run a block 127.A.B.0/24 of its own: Services take addresses from .1 upwards, pods the next
// ones. Nothing is ever bound outside these loopback addresses.
//
// Two runs (two vitest workers, two CI jobs on one host) must not share a block. A run claims its
// block by listening on a lock port at the block's .255 address: the kernel releases the claim
// when the process dies, so a crashed run never leaks a block. Pod IPs are never reused within a
// run (a new pod always gets a new address, as a pod IP is not reused while a cluster's state still
// mentions it), so a long run can use up a block: the pool then claims another one in advance.

import net from 'node:net';

/** Port bound on 127.A.B.255 to claim the block for this process. */
const LOCK_PORT = 47_474;
/** Hosts .1 .. .254 of each block are handed out; .255 holds the lock. */
const HOSTS_PER_BLOCK = 254;
/** When fewer addresses than this remain, the next block is claimed in the background. */
const PREFETCH_BELOW = 64;
const MAX_ATTEMPTS = 64;

interface Block {
  prefix: string; // "127.A.B"
  lock?: net.Server;
  next: number; // next host number to hand out
}

function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

function listenLock(host: string): Promise<net.Server | 'in-use'> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', (err: NodeJS.ErrnoException) => {
      server.close();
      if (err.code === 'EADDRINUSE') resolve('in-use');
      else reject(err);
    });
    server.listen({ host, port: LOCK_PORT, exclusive: true }, () => {
      // The lock must never keep the event loop alive on its own.
      server.unref();
      resolve(server);
    });
  });
}

/** Claims a random block in 127.20.0.0 .. 127.250.255.0, never in 127.0.0.0/24 (localhost itself). */
async function claimBlock(avoid: ReadonlySet<string>): Promise<Block> {
  let inUse = 0;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const prefix = `127.${randomInt(20, 250)}.${randomInt(0, 255)}`;
    if (avoid.has(prefix)) continue;
    const lock = await listenLock(`${prefix}.255`);
    if (lock !== 'in-use') return { prefix, lock, next: 1 };
    inUse++;
  }
  // Every attempt found the lock port taken: something unrelated listens on it on all addresses.
  // Random blocks still make a collision with another run unlikely, so carry on without a lock.
  if (inUse === MAX_ATTEMPTS) {
    for (;;) {
      const prefix = `127.${randomInt(20, 250)}.${randomInt(0, 255)}`;
      if (!avoid.has(prefix)) return { prefix, next: 1 };
    }
  }
  throw new Error('could not claim a loopback address block');
}

export class AddressPool {
  private readonly blocks: Block[];
  private prefetch?: Promise<void>;
  private closed = false;

  private constructor(first: Block) {
    this.blocks = [first];
  }

  static async create(): Promise<AddressPool> {
    return new AddressPool(await claimBlock(new Set()));
  }

  /** The first block's prefix, "127.A.B": Services live here. */
  get prefix(): string {
    return this.blocks[0]!.prefix;
  }

  /** The next unused address. Synchronous so that controllers can create pods in one step. */
  allocate(): string {
    if (this.closed) throw new Error('address pool is closed');
    const block = this.blocks.find((b) => b.next <= HOSTS_PER_BLOCK);
    if (!block) throw new Error(`loopback addresses exhausted (${this.blocks.length * HOSTS_PER_BLOCK} used by this run)`);
    const address = `${block.prefix}.${block.next++}`;
    if (this.remaining() < PREFETCH_BELOW && !this.prefetch) {
      this.prefetch = claimBlock(new Set(this.blocks.map((b) => b.prefix)))
        .then((b) => {
          if (this.closed) b.lock?.close();
          else this.blocks.push(b);
        })
        .catch(() => undefined)
        .finally(() => {
          this.prefetch = undefined;
        });
    }
    return address;
  }

  private remaining(): number {
    return this.blocks.reduce((n, b) => n + (HOSTS_PER_BLOCK + 1 - b.next), 0);
  }

  /** Releases every block (closes the lock listeners). Idempotent. */
  close(): void {
    this.closed = true;
    for (const block of this.blocks) block.lock?.close();
  }
}
