// What a netns cluster needs from this machine, each missing piece one line with its install hint.

import { release } from 'node:os';
import { onPath } from '../../profiles/requirements.ts';
import { programsMissing } from './control-plane-binary.ts';
import { addressPlan, AddressPlanError } from './address-plan.ts';
import { freePlan } from './leftovers.ts';

/** kube-proxy's nftables mode needs Linux 5.13 (NFTablesKubeProxyKernelVersion, pkg/util/kernel/constants.go). */
const MIN_KERNEL: [number, number] = [5, 13];

const COMMANDS: { command: string; from: string }[] = [
  { command: 'ip', from: 'iproute2' },
  { command: 'nsenter', from: 'util-linux' },
  { command: 'unshare', from: 'util-linux' },
  // kube-proxy's nftables mode runs `nft` for every change it makes (knftables).
  { command: 'nft', from: 'nftables' },
  { command: 'openssl', from: 'openssl' },
];

export async function netnsMissing(opts: { uid?: number; kernel?: string; env?: NodeJS.ProcessEnv; kubeVersion?: string } = {}): Promise<string[]> {
  const missing: string[] = [];
  if (process.platform !== 'linux') return [`--provider netns needs Linux (network namespaces); this is ${process.platform}`];
  const env = opts.env ?? process.env;
  const uid = opts.uid ?? process.getuid?.();
  if (uid !== 0) missing.push('not root: --provider netns creates network namespaces, veths, a bridge and nftables rules (run it as root, e.g. in CI or a VM)');
  const [major = 0, minor = 0] = (opts.kernel ?? release()).split('.').map((n) => parseInt(n, 10));
  if (major < MIN_KERNEL[0] || (major === MIN_KERNEL[0] && minor < MIN_KERNEL[1])) missing.push(`Linux ${opts.kernel ?? release()} is older than ${MIN_KERNEL.join('.')}, which kube-proxy's nftables mode needs`);
  for (const { command, from } of COMMANDS) if (!onPath(command, env['PATH'] ?? '')) missing.push(`${command} not found on PATH (install: apt-get install ${from})`);
  const block = env['ZERODROP_NETNS_BLOCK'];
  let blockValid = true;
  if (block !== undefined) {
    try {
      addressPlan(2, block);
    } catch (err) {
      if (!(err instanceof AddressPlanError)) throw err;
      missing.push(`ZERODROP_NETNS_BLOCK=${block}: ${err.message}`);
      blockValid = false;
    }
  }
  // Two clusters at once take both default blocks; a third run says so here, with nothing created.
  if (blockValid && uid === 0 && onPath('ip', env['PATH'] ?? '')) {
    await freePlan(2, block).catch((err: unknown) => missing.push((err as Error).message));
  }
  const programs = await programsMissing(env['ZERODROP_KUBE_BINARIES'], opts.kubeVersion);
  if (programs) missing.push(programs);
  return missing;
}
