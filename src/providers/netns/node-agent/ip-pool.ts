// Pod addresses from the node's podCIDR: .2 ... .254 of the range's first /24 (the .1 and the
// broadcast-looking .255 are left out, as host-local IPAM leaves the gateway and broadcast out).
// An address freed goes to the back of the queue, so that a new pod does not take the address of
// a pod that just went away while peers may still have connections to it.

export class IpPool {
  private readonly free: string[] = [];
  private readonly used = new Set<string>();

  constructor(cidr: string) {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
    if (!m) throw new Error(`podCIDR ${cidr} is not an IPv4 CIDR`);
    const prefix = Number(m[5]);
    if (prefix > 24) throw new Error(`podCIDR ${cidr}: the agent needs a /24 or larger`);
    for (let host = 2; host <= 254; host++) this.free.push(`${m[1]}.${m[2]}.${m[3]}.${host}`);
  }

  allocate(): string {
    const ip = this.free.shift();
    if (ip === undefined) throw new Error('no pod address left in the node podCIDR');
    this.used.add(ip);
    return ip;
  }

  release(ip: string): void {
    if (!this.used.delete(ip)) return;
    this.free.push(ip);
  }

  get inUse(): number {
    return this.used.size;
  }
}
