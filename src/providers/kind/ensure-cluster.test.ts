// The kind CLI driven through execa, against a stand-in `kind` on PATH that records its argv: create
// from the generated config with the pinned node image, reuse by name, delete only what was created.

import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureKindCluster, KIND_NODE_IMAGES } from './kind.ts';

const FAKE_KIND = `#!/bin/sh
state="$FAKE_KIND_STATE"
echo "$*" >> "$state/calls"
case "$1 $2" in
  "get clusters") cat "$state/clusters" 2>/dev/null || echo "No kind clusters found." >&2 ;;
  "create cluster")
    shift 2
    while [ $# -gt 0 ]; do
      case "$1" in
        --name) name="$2"; shift ;;
        --config) cp "$2" "$state/config.yaml" ;;
      esac
      shift
    done
    echo "$name" >> "$state/clusters" ;;
  "get kubeconfig") printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: kind\\n  cluster:\\n    server: https://127.0.0.1:6443\\ncontexts:\\n- name: kind\\n  context:\\n    cluster: kind\\n    user: kind\\nusers:\\n- name: kind\\n  user: {}\\ncurrent-context: kind\\n' ;;
  "delete cluster") ;;
esac
`;

describe('ensureKindCluster through the kind CLI', () => {
  let dir: string;
  let savedPath: string | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'zerodrop-fake-kind-'));
    await writeFile(join(dir, 'kind'), FAKE_KIND);
    await chmod(join(dir, 'kind'), 0o755);
    savedPath = process.env['PATH'];
    process.env['PATH'] = `${dir}${delimiter}${savedPath ?? ''}`;
    process.env['FAKE_KIND_STATE'] = dir;
  });
  afterEach(async () => {
    process.env['PATH'] = savedPath;
    delete process.env['FAKE_KIND_STATE'];
    await rm(dir, { recursive: true, force: true });
  });
  const calls = async () => (await readFile(join(dir, 'calls'), 'utf8')).trim().split('\n');

  it('creates a missing cluster from the generated config and the pinned image, and deletes it on dispose', async () => {
    {
      await using cluster = await ensureKindCluster({ name: 'zd-test', kubeVersion: '1.35', workers: 2 });
      expect(cluster.created).toBe(true);
      expect(cluster.kubeConfig().getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
      const config = parse(await readFile(join(dir, 'config.yaml'), 'utf8')) as { nodes: { role: string }[] };
      expect(config.nodes.map((n) => n.role)).toEqual(['control-plane', 'worker', 'worker']);
    }
    const argv = await calls();
    expect(argv[0]).toBe('get clusters');
    expect(argv[1]).toMatch(new RegExp(`^create cluster --name zd-test --config \\S+kind\\.yaml --image ${KIND_NODE_IMAGES['1.35']?.replace(/[.]/g, '\\.')} --wait 180s$`));
    expect(argv[2]).toBe('get kubeconfig --name zd-test');
    expect(argv.at(-1)).toBe('delete cluster --name zd-test');
  });

  it('reuses an existing cluster by name and never deletes it', async () => {
    await writeFile(join(dir, 'clusters'), 'other\nzd-test\n');
    {
      await using cluster = await ensureKindCluster({ name: 'zd-test' });
      expect(cluster.created).toBe(false);
      await cluster.delete();
    }
    const argv = await calls();
    expect(argv).toEqual(['get clusters', 'get kubeconfig --name zd-test']);
  });
});
