import { describe, expect, it } from 'vitest';

import { execInContainerArgv } from './probe-checks.ts';
import { hostsFile, rootfsScript, shQuote } from './rootfs-script.ts';

describe('rootfsScript', () => {
  const script = rootfsScript({
    root: '/agent/pods/u/containers/main/root',
    mounts: [
      { source: '/agent/pods/u/volumes/fixtures', target: '/zerodrop/fixtures', readOnly: true, file: false },
      { source: "/agent/pods/u/volumes/it's", target: '/etc-like/conf.txt', readOnly: false, file: true },
    ],
    hostsFile: '/agent/pods/u/hosts',
    hostname: 'web-1',
    nodeExec: '/opt/node/bin/node',
    workingDir: '/zerodrop',
    links: { bin: 'usr/bin', lib: 'usr/lib' },
    binds: [],
  });

  it('builds the root read-only from the host, mounts volumes, then execs the argv with only its env', () => {
    expect(script).toContain(`mount -t tmpfs -o mode=755 zerodrop-root "$R"`);
    expect(script).toContain(`mount -o remount,bind,ro "$R"/usr`);
    expect(script).toContain(`ln -s 'usr/bin' "$R"/bin`);
    expect(script).toContain(`mount --bind '/opt/node/bin/node' "$R"/.zerodrop/bin/node`);
    expect(script).toContain(`mount -o remount,bind,ro "$R"'/zerodrop/fixtures'`);
    expect(script).not.toContain(`remount,bind,ro "$R"'/etc-like/conf.txt'`);
    expect(script).toContain(`touch "$R"'/etc-like/conf.txt'`);
    expect(script).toContain(shQuote("/agent/pods/u/volumes/it's"));
    expect(script).toContain(`hostname 'web-1'`);
    const lines = script.trim().split('\n');
    expect(lines.slice(-3)).toEqual(['printf started >&3', 'exec 3>&-', `exec chroot "$R" /usr/bin/env -i -C '/zerodrop' "$@"`]);
  });

  it('quotes for sh', () => {
    expect(shQuote("a'b c")).toBe(`'a'\\''b c'`);
  });

  it('writes the managed hosts file', () => {
    expect(hostsFile('198.18.129.2', 'web')).toContain('198.18.129.2\tweb\n');
  });

  it('runs exec probes and hooks inside the container with its environment only', () => {
    expect(execInContainerArgv(42, new Map([['A', '1']]), ['sh', '-c', 'true'])).toEqual([
      'nsenter', '--target=42', '--net', '--mount', '--uts', '--root', '--wd', '--', '/usr/bin/env', '-i', 'A=1', 'sh', '-c', 'true',
    ]);
  });
});
