import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadClusterConfig } from './cluster.ts';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: staging
  cluster: { server: 'https://staging.example:6443' }
- name: prod
  cluster: { server: 'https://prod.example:6443' }
users:
- name: me
  user: { token: t }
contexts:
- name: staging
  context: { cluster: staging, user: me }
- name: prod
  context: { cluster: prod, user: me }
current-context: staging
`;

describe('an existing cluster from a kubeconfig', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'zerodrop-kubeconfig-'));
    file = join(dir, 'config');
    await writeFile(file, KUBECONFIG);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uses the current context unless --context names another', () => {
    expect(loadClusterConfig({ kubeconfig: file }).getCurrentCluster()?.server).toBe('https://staging.example:6443');
    expect(loadClusterConfig({ kubeconfig: file, context: 'prod' }).getCurrentCluster()?.server).toBe('https://prod.example:6443');
  });

  it('names the contexts it has when --context is wrong', () => {
    expect(() => loadClusterConfig({ kubeconfig: file, context: 'qa' })).toThrow(/context qa is not in .*; contexts: staging, prod/);
  });

  it('merges every file $KUBECONFIG lists, as kubectl does: the first to name a context wins', async () => {
    const other = join(dir, 'other');
    await writeFile(
      other,
      KUBECONFIG.replaceAll('staging', 'dev').replace("https://prod.example:6443", 'https://shadowed.example:6443').replace('current-context: dev', ''),
    );
    // A listed file that does not exist is skipped, as kubectl skips it.
    const env = { KUBECONFIG: `${join(dir, 'missing')}:${file}:${other}` };
    expect(loadClusterConfig({}, env).getCurrentCluster()?.server).toBe('https://staging.example:6443');
    expect(loadClusterConfig({ context: 'dev' }, env).getCurrentCluster()?.server).toBe('https://dev.example:6443');
    // Both files name a context and cluster "prod": the first file's.
    expect(loadClusterConfig({ context: 'prod' }, env).getCurrentCluster()?.server).toBe('https://prod.example:6443');
    expect(() => loadClusterConfig({ context: 'qa' }, env)).toThrow(/context qa is not in \$KUBECONFIG \(.*config, .*other\); contexts: staging, prod, dev/);
    expect(loadClusterConfig({ context: 'dev' }, { KUBECONFIG: `${join(dir, 'missing')}:${other}` }).getCurrentCluster()?.server).toBe('https://dev.example:6443');
  });
});
