// Where every address of a netns cluster comes from: one IPv4 /18 the run owns (by default the first
// free one of 198.18.0.0/15, the block RFC 2544 sets aside for benchmarking: no real network routes
// it, and the API server accepts it, unlike loopback or link-local addresses, which it refuses for
// endpoints and as --advertise-address). Nothing outside the block is ever assigned, and nothing
// routes out of it. Eight clusters fit at once (parallel CI jobs, two users), each in its own /18.
//
//   x.y.c.0/24         the cluster network: a bridge on the host
//     .1               the control plane's namespace (kube-apiserver's advertise address)
//     .10 + k          node k's namespace (its InternalIP; NodePorts answer here)
//     .254             the host's end of the bridge (where the harness stands)
//   x.y.(c+32).0/20    pod addresses: a /24 per node (spec.podCIDR), 16 nodes at most
//   x.y.(c+48).0/20    Services' ClusterIPs (--service-cluster-ip-range)

export interface AddressPlan {
  /** The whole block, CIDR. */
  block: string;
  /** The cluster network's /24. */
  network: string;
  host: string;
  controlPlane: string;
  /** The ClusterIP range. */
  serviceCIDR: string;
  /** The first ClusterIP: the `kubernetes` Service's. */
  apiServiceIP: string;
  /** Every node's pod range together (kube-proxy's --cluster-cidr). */
  clusterCIDR: string;
  nodes: { ip: string; podCIDR: string }[];
}

/** The blocks a cluster takes when none is given, the first one free: the /18s of 198.18.0.0/15. */
export const DEFAULT_BLOCKS: readonly string[] = [18, 19].flatMap((b) => [0, 64, 128, 192].map((c) => `198.${b}.${c}.0/18`));
export const MAX_NODES = 16;

export class AddressPlanError extends Error {}

/** The plan for `nodes` nodes in `block`, a /18. Throws AddressPlanError naming the problem and the fix. */
export function addressPlan(nodes: number, block: string = DEFAULT_BLOCKS[0]!): AddressPlan {
  const match = /^(\d+)\.(\d+)\.(\d+)\.0\/18$/.exec(block);
  const [a, b, c] = [Number(match?.[1]), Number(match?.[2]), Number(match?.[3])];
  if (!match || a > 255 || b > 255 || c % 64 !== 0 || c > 192) throw new AddressPlanError(`address block "${block}": needs an IPv4 /18 such as ${DEFAULT_BLOCKS[0]} (its third number 0, 64, 128 or 192)`);
  // Loopback, "this network", link-local and multicast: Kubernetes refuses them for endpoints.
  if (a === 127 || a === 0 || a >= 224 || (a === 169 && b === 254)) throw new AddressPlanError(`address block ${block}: Kubernetes refuses loopback, link-local and multicast addresses for pods and endpoints; use ${DEFAULT_BLOCKS[0]}`);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) throw new AddressPlanError(`nodes: ${nodes} is not a whole number between 1 and ${MAX_NODES}`);
  const net = `${a}.${b}`;
  return {
    block,
    network: `${net}.${c}.0/24`,
    host: `${net}.${c}.254`,
    controlPlane: `${net}.${c}.1`,
    serviceCIDR: `${net}.${c + 48}.0/20`,
    apiServiceIP: `${net}.${c + 48}.1`,
    clusterCIDR: `${net}.${c + 32}.0/20`,
    nodes: Array.from({ length: nodes }, (_, k) => ({ ip: `${net}.${c}.${10 + k}`, podCIDR: `${net}.${c + 32 + k}.0/24` })),
  };
}
