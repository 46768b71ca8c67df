// When each node's proxy applies an endpoint change. No real Service load balancer applies a change
// at one fixed delay:
//
// - kube-proxy runs on every node and applies changes at its next sync of the rules, no sooner than
//   `minSyncPeriod` after its previous sync (`--iptables-min-sync-period`, `--nftables-min-sync-period`,
//   1 s by default), each node on its own loop and later still on a busy node
//   (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/,
//   https://kubernetes.io/docs/reference/networking/virtual-ips/).
// - A cloud load balancer deregisters a target asynchronously, over a range of seconds, each of its
//   nodes at its own moment (an AWS NLB: https://docs.aws.amazon.com/elasticloadbalancing/latest/network/load-balancer-target-groups.html#deregistration-delay).
//
// So each node applies each change `delayMs` plus a lag drawn uniformly from [0, spreadMs), and never
// before it applied the previous change (a sync applies the state as it is then, in order). Each lag
// is drawn from the seed, the node and the change itself (which pod, to which conditions, its how
// many-th such change), not from the order changes came in, so that the seed on the Timeline
// replays a failing run's lags even when the pods' changes interleave differently.

/** mulberry32: a small, fast 32-bit generator; the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed mixed with a name (FNV-1a): a Service's seed from the run's, a draw's from the Service's. */
export function serviceSeed(runSeed: number, name: string): number {
  let h = (0x811c9dc5 ^ runSeed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** A fresh seed for a run that was given none. */
export function newSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000);
}

export interface ProgrammingScheduleOptions {
  delayMs: number;
  spreadMs: number;
  nodes: readonly string[];
  seed: number;
}

export class ProgrammingSchedule {
  readonly nodes: readonly string[];
  private readonly delayMs: number;
  private readonly spreadMs: number;
  private readonly seed: number;
  /** Per node, when it applied (or will apply) its latest change. */
  private readonly lastApply: number[];
  /** How many changes of each key so far: the n-th such change draws its own lags. */
  private readonly seen = new Map<string, number>();

  constructor(o: ProgrammingScheduleOptions) {
    this.nodes = o.nodes;
    this.delayMs = Math.max(0, o.delayMs);
    this.spreadMs = Math.max(0, o.spreadMs);
    this.seed = o.seed;
    this.lastApply = o.nodes.map(() => -Infinity);
  }

  /**
   * For a change made at `now`, named by `key` (the pod and its new conditions), per node in the
   * order of `nodes`: `drawnMs`, the delay plus the lag drawn for it (what the seed replays, whole
   * ms), and `inMs`, when it applies after `now`: later than drawn when the node's previous change
   * applies later still.
   */
  next(now: number, key: string): { drawnMs: number; inMs: number }[] {
    const nth = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, nth);
    return this.nodes.map((node, i) => {
      const draw = seededRandom(serviceSeed(this.seed, `${key}#${nth}@${node}`))();
      const drawnMs = this.delayMs + (this.spreadMs > 0 ? Math.floor(draw * this.spreadMs) : 0);
      const at = Math.max(this.lastApply[i] ?? -Infinity, now + drawnMs);
      this.lastApply[i] = at;
      return { drawnMs, inMs: at - now };
    });
  }
}
