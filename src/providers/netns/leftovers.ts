// What a netns cluster leaves on the machine, and how it goes: by name. Every namespace of cluster
// <id> is `zdk-<id>-*` (the control plane, the nodes, and the pods the node agents made), its
// bridge `zdk<id>`, its files one directory. Each process of the cluster runs in one of its
// namespaces, so killing every process in them (`ip netns pids`) kills the whole cluster, pods
// included; the pods' mount namespaces and the nftables tables kube-proxy made in a node's namespace
// go with them.
//
// A record per cluster (<state dir>/clusters/<id>.json) names its owner process, so that `zerodrop
// clean` can tell a cluster whose run was killed from one that is running.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { processRef, sameProcessAlive, stateDir, type ProcessRef } from '../../state/run-record.ts';
import { addressPlan, DEFAULT_BLOCKS, type AddressPlan } from './address-plan.ts';
import { bridgeName, clusterIdOfHostLink, isClusterHostLink, NETNS_PREFIX } from './host-network.ts';

export interface ClusterRecord {
  id: string;
  dir: string;
  block: string;
  owner: ProcessRef;
}

const recordsDir = (dir = stateDir()): string => join(dir, 'clusters');

export function recordCluster(facts: Omit<ClusterRecord, 'owner'>, dir = stateDir()): void {
  mkdirSync(recordsDir(dir), { recursive: true });
  writeFileSync(join(recordsDir(dir), `${facts.id}.json`), JSON.stringify({ ...facts, owner: processRef(process.pid) } satisfies ClusterRecord));
}

export function forgetCluster(id: string, dir = stateDir()): void {
  rmSync(join(recordsDir(dir), `${id}.json`), { force: true });
}

export function readClusterRecords(dir = stateDir()): ClusterRecord[] {
  if (!existsSync(recordsDir(dir))) return [];
  const records: ClusterRecord[] = [];
  for (const file of readdirSync(recordsDir(dir))) {
    if (!file.endsWith('.json')) continue;
    try {
      records.push(JSON.parse(readFileSync(join(recordsDir(dir), file), 'utf8')) as ClusterRecord);
    } catch {
      // A record cut short by a crash names nothing reliable; its namespaces are still found by name.
    }
  }
  return records;
}

/** The names of the network namespaces on this machine. */
export async function netnsList(): Promise<string[]> {
  const { stdout } = await execa('ip', ['netns', 'list']);
  return stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n !== '');
}

/** Ids of the netns clusters whose namespaces exist on this machine. */
export async function clusterIdsOnMachine(): Promise<string[]> {
  const ids = new Set<string>();
  for (const ns of await netnsList()) {
    const m = new RegExp(`^${NETNS_PREFIX}([0-9a-f]{8})-`).exec(ns);
    if (m) ids.add(m[1]!);
  }
  // A bridge whose namespaces were never made (a run killed between the two), or a veth whose
  // namespace outlived its name (see removeCluster).
  for (const link of await hostLinks()) {
    const id = clusterIdOfHostLink(link);
    if (id) ids.add(id);
  }
  return [...ids];
}

/** The names of the links in the host's network namespace. */
async function hostLinks(): Promise<string[]> {
  const { stdout } = await execa('ip', ['-j', 'link', 'show']);
  return parseLinks(stdout);
}

function parseLinks(json: string): string[] {
  return (JSON.parse(json || '[]') as { ifname: string }[]).map((l) => l.ifname);
}

/**
 * The order a cluster's host links are deleted in: veths, then the bridge. `ip netns del` only
 * unlinks a namespace's name; the kernel frees the namespace, and the veth pairs into it, later (its
 * cleanup work runs deferred, and never while anything still holds the namespace), so a host-side veth
 * outlives the name by a moment or for good. Deleting one end of a veth deletes both.
 */
function clusterLinksToDelete(id: string, links: string[]): string[] {
  const ours = links.filter((l) => isClusterHostLink(id, l));
  return [...ours.filter((l) => l !== bridgeName(id)), ...ours.filter((l) => l === bridgeName(id))];
}

async function pidsIn(netns: string): Promise<number[]> {
  try {
    const { stdout } = await execa('ip', ['netns', 'pids', netns]);
    return stdout.split('\n').map(Number).filter((p) => Number.isInteger(p) && p > 0);
  } catch {
    return [];
  }
}

/** Kills every process of cluster `id` and removes its namespaces, bridge and directory. Safe to repeat. */
export async function removeCluster(cluster: { id: string; dir?: string }): Promise<void> {
  const namespaces = (await netnsList()).filter((ns) => ns.startsWith(`${NETNS_PREFIX}${cluster.id}-`));
  for (let round = 0; round < 20; round++) {
    const pids = (await Promise.all(namespaces.map(pidsIn))).flat();
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await sleep(100);
  }
  for (const ns of namespaces) await execa('ip', ['netns', 'del', ns], { reject: false });
  for (const link of clusterLinksToDelete(cluster.id, await hostLinks())) await execa('ip', ['link', 'del', link], { reject: false });
  if (cluster.dir) await rm(cluster.dir, { recursive: true, force: true });
  releaseNetnsDir();
}

/**
 * `ip netns add` makes NETNS_DIR a shared bind mount of itself the first time it is used, and
 * nothing takes it away: left behind once the last namespace is gone, it is a mount our run made.
 * Unmounted only while empty; a namespace mounted under it in the meantime makes umount fail with
 * EBUSY (no lazy unmount), and the next `ip netns add` makes it again.
 */
export function releaseNetnsDir(dir = NETNS_DIR, mountinfo = '/proc/self/mountinfo'): boolean {
  try {
    if (readdirSync(dir).length > 0) return false;
    const mounted = readFileSync(mountinfo, 'utf8')
      .split('\n')
      .some((line) => line.split(' ')[4] === dir);
    if (!mounted) return false;
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const NETNS_DIR = '/run/netns';

/**
 * removeCluster for a process that is exiting (a second Ctrl-C, an uncaught error): synchronous, so
 * that it runs in an 'exit' handler.
 */
export function removeClusterSync(cluster: { id: string; dir?: string }): void {
  const run = (args: string[]): string => {
    try {
      return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return '';
    }
  };
  const namespaces = run(['netns', 'list']).split('\n').map((l) => l.split(' ')[0] ?? '').filter((ns) => ns.startsWith(`${NETNS_PREFIX}${cluster.id}-`));
  for (const ns of namespaces) {
    for (const pid of run(['netns', 'pids', ns]).split('\n').map(Number).filter((p) => p > 0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  // `ip netns del` only unlinks the namespace: it goes once its last process has died, a moment later.
  for (const ns of namespaces) run(['netns', 'del', ns]);
  for (const link of clusterLinksToDelete(cluster.id, parseLinks(run(['-j', 'link', 'show'])))) run(['link', 'del', link]);
  if (cluster.dir) rmSync(cluster.dir, { recursive: true, force: true });
  releaseNetnsDir();
}

/** The bridge's alias: the owner process (id and start time) and the cluster's directory. */
export function ownerAlias(owner: ProcessRef, dir: string): string {
  return `zerodrop owner=${owner.pid}:${owner.startTime ?? ''} dir=${dir}`;
}

/** The owner and directory a cluster's bridge names, if it has one. */
async function ownerOf(id: string): Promise<{ owner: ProcessRef; dir: string } | undefined> {
  const { stdout, exitCode } = await execa('ip', ['-j', 'link', 'show', bridgeName(id)], { reject: false });
  if (exitCode !== 0) return undefined;
  const alias = (JSON.parse(stdout || '[]') as { ifalias?: string }[])[0]?.ifalias ?? '';
  const m = /^zerodrop owner=(\d+):(\S*) dir=(.*)$/.exec(alias);
  if (!m) return undefined;
  return { owner: m[2] ? { pid: Number(m[1]), startTime: m[2] } : { pid: Number(m[1]) }, dir: m[3]! };
}

/** The plan in `block`, or in the first default block no interface of this machine uses yet; throws saying why none is free. */
export async function freePlan(nodes: number, block?: string): Promise<AddressPlan> {
  const problems: string[] = [];
  for (const candidate of block ? [block] : DEFAULT_BLOCKS) {
    const plan = addressPlan(nodes, candidate);
    const inUse = await blockInUse(plan);
    if (!inUse) return plan;
    problems.push(inUse);
  }
  throw new Error(`no free address block for a netns cluster: ${problems.join('; ')}`);
}

/** Why the plan's addresses cannot be used here (an interface holds one, or a route leads into the block), or undefined. */
export async function blockInUse(plan: AddressPlan): Promise<string | undefined> {
  const { stdout } = await execa('ip', ['-j', '-4', 'addr', 'show']);
  for (const link of JSON.parse(stdout) as { ifname: string; addr_info?: { local: string; prefixlen: number }[] }[]) {
    const hit = link.addr_info?.find((a) => overlaps(`${a.local}/${a.prefixlen}`, plan.block));
    if (hit) {
      const ours = /^zdk[0-9a-f]{8}$/.test(link.ifname);
      return `the address block ${plan.block} is in use on this machine: ${link.ifname} has ${hit.local}/${hit.prefixlen}${ours ? ' (another zerodrop netns cluster: wait for its run, or `zerodrop clean` if that run was killed)' : '; choose another block for the cluster'}`;
    }
  }
  const routes = JSON.parse((await execa('ip', ['-j', '-4', 'route', 'show'])).stdout || '[]') as { dst: string; dev?: string }[];
  const route = routes.find((r) => r.dst !== 'default' && overlaps(r.dst.includes('/') ? r.dst : `${r.dst}/32`, plan.block));
  if (route) return `the address block ${plan.block} is in use on this machine: a route to ${route.dst} leads into it${route.dev ? ` (dev ${route.dev})` : ''}; choose another block for the cluster`;
  return undefined;
}

/** Whether two IPv4 CIDRs share an address. */
function overlaps(a: string, b: string): boolean {
  const range = (cidr: string): [number, number] => {
    const [ip, bits] = cidr.split('/');
    const n = ip!.split('.').reduce((acc, x) => acc * 256 + Number(x), 0);
    const size = 2 ** (32 - Number(bits));
    const start = n - (n % size);
    return [start, start + size - 1];
  };
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 <= b1 && b0 <= a1;
}

export interface NetnsCleanResult {
  removed: string[];
  running: string[];
}

/**
 * Removes every netns cluster whose owner is gone: a recorded one whose process died, and any
 * `zdk-<id>-*` namespaces no live record claims.
 */
export async function cleanNetnsClusters(opts: { dryRun?: boolean; log?: (line: string) => void; dir?: string } = {}): Promise<NetnsCleanResult> {
  const dir = opts.dir ?? stateDir();
  const log = opts.log ?? (() => {});
  const result: NetnsCleanResult = { removed: [], running: [] };
  const records = readClusterRecords(dir);
  const live = new Set(records.filter((r) => sameProcessAlive(r.owner)).map((r) => r.id));
  // Clusters of runs recorded in another state directory (another user's, a test's) are found by name;
  // their bridge says whose they are.
  const owners = new Map<string, { owner: ProcessRef; dir: string }>();
  for (const id of await clusterIdsOnMachine()) {
    const owned = await ownerOf(id);
    if (!owned) continue;
    owners.set(id, owned);
    if (sameProcessAlive(owned.owner)) live.add(id);
  }
  const remove = async (cluster: { id: string; dir?: string }, why: string): Promise<void> => {
    const what = `netns cluster ${cluster.id} (${why}): its processes, namespaces zdk-${cluster.id}-*, bridge zdk${cluster.id}${cluster.dir ? `, ${cluster.dir}` : ''}`;
    if (opts.dryRun) {
      log(`would remove ${what}`);
    } else {
      await removeCluster(cluster);
      forgetCluster(cluster.id, dir);
      log(`removed ${what}`);
    }
    result.removed.push(cluster.id);
  };
  for (const record of records) if (!live.has(record.id)) await remove(record, `its run, process ${record.owner.pid}, is gone`);
  for (const id of await clusterIdsOnMachine()) {
    if (live.has(id)) {
      result.running.push(id);
    } else if (!result.removed.includes(id)) {
      const owned = owners.get(id);
      if (owned) {
        await remove({ id, dir: owned.dir }, `its run, process ${owned.owner.pid}, is gone`);
        continue;
      }
      // A bridge without an owner's alias (a run killed before it set one): the cluster's components
      // are children of the run that started them, so a live parent outside the cluster says it runs.
      if ((await liveOwnerOf(id)) !== undefined) result.running.push(id);
      else await remove({ id }, 'no run claims it');
    }
  }
  // A run killed outright leaves the mount too, even once its cluster is gone.
  if (!opts.dryRun && releaseNetnsDir()) log(`unmounted ${NETNS_DIR} (empty; ip netns makes it again when it needs it)`);
  return result;
}

/** A live process outside cluster `id`'s namespaces that is the parent of one of its processes, if any. */
async function liveOwnerOf(id: string): Promise<number | undefined> {
  const namespaces = (await netnsList()).filter((ns) => ns.startsWith(`${NETNS_PREFIX}${id}-`));
  const inside = new Set((await Promise.all(namespaces.map(pidsIn))).flat());
  for (const pid of inside) {
    let parent: number;
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      continue;
    }
    // Orphans go to PID 1: that parent says nothing about the run.
    if (parent > 1 && !inside.has(parent) && existsSync(`/proc/${parent}`)) return parent;
  }
  return undefined;
}
