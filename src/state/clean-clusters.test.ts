// The cluster part of `zerodrop clean` against the fake API server (request shapes) and a fake kind
// CLI: there is no Docker engine on the test machine.

import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { FakeApiServer } from '../providers/kube/fake-api-server.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { CREATED_BY_LABEL } from '../providers/kind/kind.ts';
import { cleanKindClusters, cleanNamespaces, type KindCli } from './clean-clusters.ts';
import type { CleanedRun } from './clean.ts';
import type { RunRecord } from './run-record.ts';

const servers: FakeApiServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function fakeServer(): Promise<FakeApiServer> {
  const server = await new FakeApiServer().listen();
  servers.push(server);
  return server;
}

function record(id: string, extra: Partial<RunRecord> = {}): RunRecord {
  return { version: 1, id, startedAt: '', zerodrop: { pid: 1 }, groups: [], tempDirs: [], namespaces: [], kindClusters: [], ...extra };
}

function namespace(name: string, labels: Record<string, string> = {}, phase = 'Active') {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels }, status: { phase } };
}

describe('zerodrop clean: namespaces', () => {
  async function cluster() {
    const server = await fakeServer();
    const objects = [
      namespace('zerodrop-aaaa1111', { [LABELS.run]: 'aaaa1111' }),
      namespace('zerodrop-bbbb2222', { [LABELS.run]: 'bbbb2222' }),
      namespace('zerodrop-cccc3333', { [LABELS.run]: 'cccc3333' }, 'Terminating'),
      // Named like ours, but not labelled: someone else's.
      namespace('zerodrop-lookalike'),
      namespace('default'),
    ];
    for (const ns of objects) server.put('/api/v1/namespaces', ns);
    server.respond((req) => {
      const name = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(req.path)?.[1];
      const ns = objects.find((o) => o.metadata.name === name);
      return req.method === 'GET' && ns ? { status: 200, body: ns } : undefined;
    });
    return { server, client: KubeClient.forServer(server.url) };
  }

  it('deletes only the namespaces carrying the run label, skipping a live run\'s and one already terminating', async () => {
    const { server, client } = await cluster();
    const lines: string[] = [];
    const problems = await cleanNamespaces(client, { dryRun: false, log: (l) => lines.push(l), live: [record('live', { namespaces: ['zerodrop-bbbb2222'] })], timeoutMs: 1_000 });
    expect(problems).toEqual([]);
    expect(lines).toEqual([
      `deleted namespace zerodrop-aaaa1111 (${LABELS.run}=aaaa1111)`,
      'skipped namespace zerodrop-bbbb2222: its run is still going',
      'namespace zerodrop-cccc3333 is already being deleted',
    ]);
    const deletes = server.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => r.path)).toEqual([
      '/api/v1/namespaces/zerodrop-aaaa1111/pods',
      '/api/v1/namespaces/zerodrop-aaaa1111/services',
      '/api/v1/namespaces/zerodrop-aaaa1111',
    ]);
    expect(deletes[0]?.query).toEqual({ gracePeriodSeconds: '0' });
    expect(deletes[2]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
  });

  it('with --dry-run lists them and sends no DELETE', async () => {
    const { server, client } = await cluster();
    const lines: string[] = [];
    await cleanNamespaces(client, { dryRun: true, log: (l) => lines.push(l), live: [] });
    expect(lines.filter((l) => l.startsWith('would delete'))).toEqual([
      `would delete namespace zerodrop-aaaa1111 (${LABELS.run}=aaaa1111)`,
      `would delete namespace zerodrop-bbbb2222 (${LABELS.run}=bbbb2222)`,
    ]);
    expect(server.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
  });
});

describe('zerodrop clean: kind clusters', () => {
  function fakeKind(existing: string[], kubeconfigs: Record<string, string>): KindCli & { deleted: string[] } {
    const deleted: string[] = [];
    return {
      deleted,
      clusters: async () => existing,
      kubeconfig: async (name) => kubeconfigs[name] ?? '',
      delete: async (name) => {
        deleted.push(name);
      },
    };
  }

  async function kindNodes(labelled: boolean): Promise<string> {
    const server = await fakeServer();
    const labels = labelled ? { [CREATED_BY_LABEL.key]: CREATED_BY_LABEL.value } : {};
    server.put('/api/v1/nodes', { metadata: { name: 'control-plane', labels } });
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kind', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'kind', user: {} }],
      contexts: [{ name: 'kind', context: { cluster: 'kind', user: 'kind' } }],
      'current-context': 'kind',
    });
  }

  const run = (kindClusters: string[]): CleanedRun => ({ path: '/state/runs/x.json', record: record('x', { kindClusters }), problems: [] });

  it('deletes a dead run\'s cluster whose nodes carry the created-by label, and leaves a same-named one without it', async () => {
    const kind = fakeKind(['zerodrop', 'zerodrop-b', 'someone-elses'], { zerodrop: await kindNodes(true), 'zerodrop-b': await kindNodes(false) });
    const runs = [run(['zerodrop', 'zerodrop-b', 'zerodrop-gone'])];
    const lines: string[] = [];
    await cleanKindClusters(runs, kind, { dryRun: false, log: (l) => lines.push(l) });
    expect(kind.deleted).toEqual(['zerodrop']);
    expect(lines).toEqual([
      'deleted kind cluster zerodrop',
      `skipped kind cluster zerodrop-b: its nodes do not carry ${CREATED_BY_LABEL.key}=${CREATED_BY_LABEL.value}`,
    ]);
    expect(runs[0]?.problems).toEqual([]);
  });

  it('with --dry-run deletes nothing; when kind fails the run keeps a problem (and its record)', async () => {
    const kind = fakeKind(['zerodrop'], { zerodrop: await kindNodes(true) });
    const lines: string[] = [];
    await cleanKindClusters([run(['zerodrop'])], kind, { dryRun: true, log: (l) => lines.push(l) });
    expect(kind.deleted).toEqual([]);
    expect(lines).toEqual(['would delete kind cluster zerodrop']);

    const failing: KindCli = { ...kind, clusters: async () => Promise.reject(new Error('Cannot connect to the Docker daemon')) };
    const runs = [run(['zerodrop'])];
    await cleanKindClusters(runs, failing, { dryRun: false, log: () => {} });
    expect(runs[0]?.problems).toEqual(['kind clusters zerodrop: `kind get clusters` failed (Cannot connect to the Docker daemon)']);
  });

  it('labels every node of the clusters it creates', async () => {
    const { kindConfig } = await import('../providers/kind/kind.ts');
    const { parse } = await import('yaml');
    const config = parse(kindConfig({ workers: 2 })) as { nodes: { labels?: Record<string, string> }[] };
    expect(config.nodes.map((n) => n.labels?.[CREATED_BY_LABEL.key])).toEqual(['zerodrop', 'zerodrop', 'zerodrop']);
  });
});
