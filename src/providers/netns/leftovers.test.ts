import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterIdOfHostLink } from './host-network.ts';
import { clusterIdsOnMachine, releaseNetnsDir, removeCluster, removeClusterSync } from './leftovers.ts';

describe('clusterIdOfHostLink', () => {
  it.each([
    ['zdk0a1b2c3d', '0a1b2c3d'],
    ['zv0a1b2c3dc', '0a1b2c3d'],
    ['zv0a1b2c3d12', '0a1b2c3d'],
    ['zdk-0a1b2c3d-cp', undefined],
    ['zdk0a1b2c3', undefined],
    ['zv0a1b2c3d123', undefined],
    ['eth0', undefined],
  ])('%s → %s', (name, id) => {
    expect(clusterIdOfHostLink(name)).toBe(id);
  });
});

// A namespace something still holds outlives `ip netns del` (the kernel frees it, and the veth
// into it, only once nothing does; and even then in deferred work): the cluster's host-side veth
// must go all the same.
describe.skipIf(process.getuid?.() !== 0)('removing a cluster whose namespace is still held', () => {
  const links = (): string[] => (JSON.parse(execFileSync('ip', ['-j', 'link', 'show'], { encoding: 'utf8' })) as { ifname: string }[]).map((l) => l.ifname);

  it.each([
    ['removeCluster', (id: string) => removeCluster({ id })],
    ['removeClusterSync', (id: string) => Promise.resolve(removeClusterSync({ id }))],
  ] as const)('%s deletes its host-side veth, and a veth left alone names its cluster', async (_, remove) => {
    const id = randomBytes(4).toString('hex');
    const netns = `zdk-${id}-cp`;
    const veth = `zv${id}c`;
    execFileSync('ip', ['netns', 'add', netns]);
    let held: number | undefined;
    try {
      execFileSync('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
      held = openSync(`/run/netns/${netns}`, 'r');
      expect(await clusterIdsOnMachine()).toContain(id);
      await remove(id);
      expect(links()).not.toContain(veth);
      expect(await clusterIdsOnMachine()).not.toContain(id);
    } finally {
      if (held !== undefined) closeSync(held);
      spawnSync('ip', ['link', 'del', veth], { stdio: 'ignore' });
      spawnSync('ip', ['netns', 'del', netns], { stdio: 'ignore' });
    }
  });
});

describe('releaseNetnsDir', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function fixture(entries: string[], mountedAt: string | undefined): { dir: string; mountinfo: string } {
    const root = mkdtempSync(join(tmpdir(), 'zerodrop-leftovers-'));
    dirs.push(root);
    const dir = join(root, 'netns');
    mkdirSync(dir);
    for (const e of entries) writeFileSync(join(dir, e), '');
    const mountinfo = join(root, 'mountinfo');
    const line = (at: string) => `700 29 0:25 /netns ${at} rw,nosuid,nodev shared:5 - tmpfs tmpfs rw`;
    writeFileSync(mountinfo, [line('/run/lock'), ...(mountedAt ? [line(mountedAt)] : [])].join('\n') + '\n');
    return { dir, mountinfo };
  }

  it('leaves a directory that still holds a namespace', () => {
    const f = fixture(['zdk-1-node0'], undefined);
    expect(releaseNetnsDir(f.dir, f.mountinfo)).toBe(false);
  });

  it('leaves an empty directory that is not a mount point', () => {
    const f = fixture([], undefined);
    expect(releaseNetnsDir(f.dir, f.mountinfo)).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)('unmounts an empty mount point (a real tmpfs here), and only once', () => {
    const f = fixture([], undefined);
    execFileSync('mount', ['-t', 'tmpfs', 'zerodrop-test', f.dir]);
    try {
      expect(releaseNetnsDir(f.dir)).toBe(true);
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${f.dir} `);
      expect(releaseNetnsDir(f.dir)).toBe(false);
    } finally {
      // Unmounted already when the test passes; this is for when it fails.
      spawnSync('umount', [f.dir], { stdio: 'ignore' });
    }
  });
});
