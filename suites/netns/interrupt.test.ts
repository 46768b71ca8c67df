// Ctrl-C at three moments of a `zerodrop run --provider netns` (the cluster starting, its pods
// starting, mid-chaos) leaves nothing on the machine: no process, network namespace, veth, bridge,
// nftables table, mount or temporary directory. A SIGKILLed run leaves its cluster; `zerodrop clean`
// finds it by its record and by its names, and removes it.

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.ts';
import { entries, processesGone, startMarked, within } from '../helpers/marked-process.ts';
import { skipReason, title } from './context.ts';

/** The cluster the run announced (`cluster <id>: ...`): other runs' clusters on this machine are not its leftovers. */
function clusterId(output: string): string {
  const id = /cluster ([0-9a-f]{8}): /.exec(output)?.[1];
  if (!id) throw new Error(`the run announced no cluster:\n${output}`);
  return id;
}

/** What netns cluster `id` could leave on this machine, by the names it gives things. */
async function clusterLeftovers(id: string): Promise<string[]> {
  const found: string[] = [];
  const netns = (await execa('ip', ['netns', 'list'])).stdout.split('\n').filter((l) => l.startsWith(`zdk-${id}-`));
  found.push(...netns.map((n) => `netns ${n}`));
  // The bridge, the cluster network's veths, and the pods' veths in the host's namespace (none should be there).
  const links = (await execa('ip', ['-br', 'link'])).stdout.split('\n').map((l) => l.split(/\s+/)[0] ?? '').filter((n) => n.startsWith(`zdk${id}`) || n.startsWith(`zv${id}`) || /^zp[0-9a-f]{8}/.test(n));
  found.push(...links.map((l) => `link ${l}`));
  // kube-proxy's tables live in the nodes' namespaces: one in the host's would be a leak.
  const tables = (await execa('nft', ['list', 'tables'])).stdout.split('\n').filter((t) => t.includes('kube-proxy'));
  found.push(...tables.map((t) => `nftables ${t}`));
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((m) => m.includes(`zerodrop-kube-${id}`) || m.includes(`/run/netns/zdk-${id}-`));
  found.push(...mounts.map((m) => `mount ${m.split(' ')[4]}`));
  return found;
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zerodrop-netns-interrupt-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const MOMENTS = [
  { after: 'API server ready', ms: 0, what: 'the cluster starting' },
  { after: 'nodes Ready', ms: 300, what: 'its pods starting' },
  { after: 'step delete', ms: 500, what: 'mid-chaos' },
] as const;

describe.skipIf(skipReason !== '')(title('interrupting a netns run'), () => {
  it.each(MOMENTS.map((m, i) => [i + 1, m] as const))('Ctrl-C %i: %j leaves nothing', async (i, moment) => {
    await using run = await startMarked(join(root, `case-${i}`), ['src/cli/main.ts', 'run', '--provider', 'netns', '--scenario', 'backend-delete-http', '--report-dir', join(root, `case-${i}`, 'report')]);
    await run.printed(moment.after);
    await new Promise((r) => setTimeout(r, moment.ms));
    expect(run.child.exitCode, run.output()).toBe(null);
    run.child.kill('SIGINT');
    const { code } = await within(30_000, `exit after Ctrl-C at ${moment.what}`, run.exited);
    const context = `Ctrl-C at ${moment.what}; exit ${code}\n${run.output()}`;
    expect(code, context).toBe(130);
    expect(await processesGone(run.env.mark, run.env.tmp), context).toEqual([]);
    expect(await clusterLeftovers(clusterId(run.output())), context).toEqual([]);
    expect((await entries(run.env.tmp)).filter((e) => e.startsWith('zerodrop-')), context).toEqual([]);
    expect(await entries(join(run.env.stateDir, 'clusters')), context).toEqual([]);
  }, 5 * 60_000);

  it('a SIGKILLed run leaves its cluster; `zerodrop clean` removes it', async () => {
    await using run = await startMarked(join(root, 'killed'), ['src/cli/main.ts', 'run', '--provider', 'netns', '--scenario', 'backend-delete-http', '--report-dir', join(root, 'killed', 'report')]);
    await run.printed('step delete');
    run.child.kill('SIGKILL');
    await run.exited;
    // What it left: the cluster, its record, its directory.
    const id = clusterId(run.output());
    expect((await clusterLeftovers(id)).some((l) => l.startsWith('netns zdk-')), run.output()).toBe(true);
    expect(await entries(join(run.env.stateDir, 'clusters'))).toHaveLength(1);
    const clean = spawn(process.execPath, [join(packageRoot, 'src/cli/main.ts'), 'clean', '--local-only'], { env: { ...process.env, CI: '1', ZERODROP_STATE_DIR: run.env.stateDir, TMPDIR: run.env.tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    clean.stdout.on('data', (c: Buffer) => (said += c.toString()));
    const code = await new Promise<number | null>((resolve) => clean.on('exit', resolve));
    expect(code, said).toBe(0);
    expect(said).toMatch(new RegExp(`removed netns cluster ${id} \\(its run, process \\d+, is gone\\)`));
    expect(await processesGone(run.env.mark, run.env.tmp), said).toEqual([]);
    expect(await clusterLeftovers(id), said).toEqual([]);
    expect((await entries(run.env.tmp)).filter((e) => e.startsWith('zerodrop-kube-')), said).toEqual([]);
  }, 5 * 60_000);
});
