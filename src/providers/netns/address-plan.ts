// Where every address of a netns cluster comes from: one IPv4 /16 the run owns (by default the first
// free one of 198.18.0.0/15, the block RFC 2544 sets aside for benchmarking: no real network routes
// it, and the API server accepts it, unlike loopback or link-local addresses, which it refuses for
// endpoints and as --advertise-address). Nothing outside the block is ever assigned, and nothing
// routes out of it. Two clusters (two test files, two users) each take a /16 of their own.
//
//   x.y.0.0/24         the cluster network: a bridge on the host
//     .1               the control plane's namespace (kube-apiserver's advertise address)
//     .10 + k          node k's namespace (its InternalIP; NodePorts answer here)
//     .254             the host's end of the bridge (where the harness stands)
//   x.y.128.0/18       pod addresses: a /24 per node (spec.podCIDR)
//   x.y.240.0/20       Services' ClusterIPs (--service-cluster-ip-range)

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

/** The blocks a cluster takes when none is given, the first one free. */
export const DEFAULT_BLOCKS = ['198.18.0.0/16', '198.19.0.0/16'] as const;
export const MAX_NODES = 16;

export class AddressPlanError extends Error {}

/** The plan for `nodes` nodes in `block`, a /16. Throws AddressPlanError naming the problem and the fix. */
export function addressPlan(nodes: number, block: string = DEFAULT_BLOCKS[0]): AddressPlan {
  const match = /^(\d+)\.(\d+)\.0\.0\/16$/.exec(block);
  const [a, b] = [Number(match?.[1]), Number(match?.[2])];
  if (!match || a > 255 || b > 255) throw new AddressPlanError(`address block "${block}": needs an IPv4 /16 such as ${DEFAULT_BLOCKS[0]}`);
  // Loopback, "this network", link-local and multicast: Kubernetes refuses them for endpoints.
  if (a === 127 || a === 0 || a >= 224 || (a === 169 && b === 254)) throw new AddressPlanError(`address block ${block}: Kubernetes refuses loopback, link-local and multicast addresses for pods and endpoints; use ${DEFAULT_BLOCKS[0]}`);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) throw new AddressPlanError(`nodes: ${nodes} is not a whole number between 1 and ${MAX_NODES}`);
  const net = `${a}.${b}`;
  return {
    block,
    network: `${net}.0.0/24`,
    host: `${net}.0.254`,
    controlPlane: `${net}.0.1`,
    serviceCIDR: `${net}.240.0/20`,
    apiServiceIP: `${net}.240.1`,
    clusterCIDR: `${net}.128.0/18`,
    nodes: Array.from({ length: nodes }, (_, k) => ({ ip: `${net}.0.${10 + k}`, podCIDR: `${net}.${128 + k}.0/24` })),
  };
}
