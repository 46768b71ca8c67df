// `zerodrop run --provider kind|k3s|cluster` on a machine that lacks what they need: one line per
// missing piece with its install hint, exit 2, and nothing started.

import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';

const run = promisify(execFile);

async function zerodrop(args: string[], env: Record<string, string | undefined> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['src/cli/main.ts', ...args], { env: { ...process.env, ...env } as NodeJS.ProcessEnv, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('cluster providers without their prerequisites', () => {
  let bin: string;
  beforeAll(async () => {
    // A PATH with a docker CLI whose engine is not running, and no kind or helm.
    bin = await mkdtemp(join(tmpdir(), 'zerodrop-path-'));
    await writeFile(join(bin, 'docker'), '#!/bin/sh\necho "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2\nexit 1\n');
    await chmod(join(bin, 'docker'), 0o755);
  });
  afterAll(async () => {
    await rm(bin, { recursive: true, force: true });
  });

  it('kind: names kind and the Docker engine, with install hints, and exits 2', async () => {
    const r = await zerodrop(['run', '--provider', 'kind', '--scenario', 'backend-delete-http'], { PATH: bin });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--provider kind cannot run here/);
    expect(r.stderr).toMatch(/kind not found on PATH \(install: go install sigs\.k8s\.io\/kind@v0\.33\.0/);
    expect(r.stderr).toMatch(/Docker engine not reachable: `docker info` failed \(Cannot connect to the Docker daemon/);
    // Nothing ran: no scenario was announced.
    expect(r.stdout).not.toMatch(/scenario\(s\)/);
  });

  it('k3s: names the Docker engine and exits 2', async () => {
    const r = await zerodrop(['run', '--provider', 'k3s'], { PATH: bin });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/Docker engine not reachable/);
  });

  it('cluster: names the missing kubeconfig and exits 2', async () => {
    const r = await zerodrop(['run', '--provider', 'cluster', '--kubeconfig', join(bin, 'nope.yaml'), '--context', 'prod']);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--kubeconfig .*nope\.yaml: file not found/);
  });

  it('rejects flags that do not belong to the provider', async () => {
    const r = await zerodrop(['run', '--provider', 'kind', '--context', 'prod'], { PATH: bin });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--context: not used by --provider kind/);
    const v = await zerodrop(['run', '--provider', 'kind', '--kube-version', 'latest'], { PATH: bin });
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/--kube-version latest: expected a Kubernetes version like v1\.33 or 1\.33/);
  });

  it('netns: names each missing command with its package, and a bad address block, and exits 2', async () => {
    // A PATH without iproute2, util-linux, nftables or openssl (node itself is run by its path).
    const r = await zerodrop(['run', '--provider', 'netns', '--scenario', 'backend-delete-http'], { PATH: bin, ZERODROP_NETNS_BLOCK: '127.0.0.0/18' });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--provider netns cannot run here/);
    expect(r.stderr).toMatch(/nft not found on PATH \(install: apt-get install nftables\)/);
    expect(r.stderr).toMatch(/ip not found on PATH \(install: apt-get install iproute2\)/);
    expect(r.stderr).toMatch(/ZERODROP_NETNS_BLOCK=127\.0\.0\.0\/18: address block 127\.0\.0\.0\/18: Kubernetes refuses loopback/);
    expect(r.stdout).not.toMatch(/scenario\(s\)/);
  });

  it.skipIf(onPath('kind'))('on this machine (no kind installed), `zerodrop run --provider kind` says what is missing and exits 2', async () => {
    const r = await zerodrop(['run', '--provider', 'kind']);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/kind not found on PATH/);
  });
});
