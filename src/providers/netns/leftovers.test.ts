import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseNetnsDir } from './leftovers.ts';

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
