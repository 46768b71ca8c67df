// Whether kube-proxy has programmed a Service's endpoints, read from its own rules. The API shows an
// endpoint ready; kube-proxy applies that up to its sync bound later (KUBE_PROXY_PROGRAMMING_BOUND_MS),
// and only on a cluster whose nodes the harness owns can it look instead of waiting the bound out.
//
// kube-proxy's nftables mode keeps one chain per Service port, named
// `service-<hash>-<namespace>/<service>/<protocol>/<port>` (pkg/proxy/nftables/proxier.go,
// servicePortChainNameBase), whose load-balancing rule names each endpoint it sends new connections
// to: `dnat ip to numgen random mod N map { 0 : 10.0.0.5 . 8080, ... }` (v1.36 and later, when no
// endpoint needs a chain of its own) or `numgen random mod N vmap { 0 : goto
// endpoint-<hash>-<namespace>/<service>/<protocol>/<port>__10.0.0.5/8080, ... }` (v1.35). Chains and
// their rules are written in one `nft -f` transaction, so a rule that names the address is a rule
// that is in force.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** A Service and the addresses of the pods its endpoints list as ready. */
export interface ServiceEndpoints {
  namespace: string;
  service: string;
  addresses: readonly string[];
}

/** The body of each `service-…-<namespace>/<service>/…` chain in `nft list table` output, one per Service port. */
function serviceChains(table: string, namespace: string, service: string): string[] {
  const bodies: string[] = [];
  const header = new RegExp(`^\\s*chain service-[A-Z0-9]+-${escape(`${namespace}/${service}/`)}\\S* \\{$`);
  let body: string[] | undefined;
  for (const line of table.split('\n')) {
    if (body === undefined) {
      if (header.test(line)) body = [];
    } else if (/^\s*\}\s*$/.test(line)) {
      bodies.push(body.join('\n'));
      body = undefined;
    } else body.push(line);
  }
  return bodies;
}

/**
 * Whether, in one node's kube-proxy table (`nft list table ip kube-proxy`), every port of each
 * Service sends new connections to each of its addresses. A Service with no port chain yet is not
 * programmed; one with no addresses asks nothing.
 */
export function programmedIn(table: string, services: readonly ServiceEndpoints[]): boolean {
  return services.every((s) => {
    if (s.addresses.length === 0) return true;
    const chains = serviceChains(table, s.namespace, s.service);
    // An address is a whole token: 10.0.0.5 must not match inside 10.0.0.50.
    return chains.length > 0 && chains.every((body) => s.addresses.every((ip) => new RegExp(`(?<![0-9.])${escape(ip)}(?![0-9])`).test(body)));
  });
}

/** Whether the kube-proxy of every one of `netnsOfNodes` (each node's network namespace) has programmed `services`. */
export async function kubeProxyProgrammed(netnsOfNodes: readonly string[], services: readonly ServiceEndpoints[]): Promise<boolean> {
  for (const netns of netnsOfNodes) {
    // No table yet (kube-proxy has not synced once): nothing is programmed there.
    const table = await exec('ip', ['netns', 'exec', netns, 'nft', 'list', 'table', 'ip', 'kube-proxy'], { maxBuffer: 64 * 1024 * 1024 }).then((r) => r.stdout, () => '');
    if (!programmedIn(table, services)) return false;
  }
  return true;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
