// The cluster part of `zerodrop clean` against the fake API server (request shapes) and a fake kind
// CLI: there is no Docker engine on the test machine.

import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { FakeApiServer } from '../providers/kube/fake-api-server.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { CREATED_BY_LABEL } from '../providers/kind/kind.ts';
import { cleanKindClusters, cleanNamespaces, formatAge, type KindCli } from './clean-clusters.ts';
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

const NOW = Date.parse('2026-11-22T12:00:00Z');
const HOUR = 3_600_000;

function namespace(name: string, labels: Record<string, string> = {}, phase = 'Active', ageMs?: number) {
  const creationTimestamp = ageMs === undefined ? undefined : new Date(NOW - ageMs).toISOString();
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels, ...(creationTimestamp ? { creationTimestamp } : {}) }, status: { phase } };
}

const runLabel = (id: string) => ({ [LABELS.run]: id });

describe('zerodrop clean: namespaces', () => {
  async function cluster() {
    const server = await fakeServer();
    const objects = [
      // A run of this machine whose zerodrop is gone (rule a), young.
      namespace('zerodrop-aaaa1111', runLabel('aaaa1111'), 'Active', 1 * HOUR),
      // A run still going on this machine: never deleted, however old.
      namespace('zerodrop-bbbb2222', runLabel('bbbb2222'), 'Active', 48 * HOUR),
      namespace('zerodrop-cccc3333', runLabel('cccc3333'), 'Terminating', 48 * HOUR),
      // No record here: another machine's, long abandoned (rule b) ...
      namespace('zerodrop-dddd4444', runLabel('dddd4444'), 'Active', 30 * HOUR),
      // ... and possibly in use right now.
      namespace('zerodrop-eeee5555', runLabel('eeee5555'), 'Active', 1 * HOUR),
      // Labelled, but the server did not say when it was created.
      namespace('zerodrop-ffff6666', runLabel('ffff6666')),
      // Named like ours, but not labelled: someone else's.
      namespace('zerodrop-lookalike', {}, 'Active', 48 * HOUR),
      namespace('default', {}, 'Active', 48 * HOUR),
    ];
    for (const ns of objects) server.put('/api/v1/namespaces', ns);
    server.respond((req) => {
      const name = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(req.path)?.[1];
      const ns = objects.find((o) => o.metadata.name === name);
      return req.method === 'GET' && ns ? { status: 200, body: ns } : undefined;
    });
    return { server, client: KubeClient.forServer(server.url) };
  }

  const live = [record('live', { namespaces: ['zerodrop-bbbb2222'] })];
  const dead = [record('crashed', { namespaces: ['zerodrop-aaaa1111'] })];
  const deleted = (server: FakeApiServer) => server.requests.filter((r) => r.method === 'DELETE' && /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)).map((r) => r.path.split('/').at(-1));

  async function clean(rules: Partial<Parameters<typeof cleanNamespaces>[1]> = {}) {
    const { server, client } = await cluster();
    const lines: string[] = [];
    const problems = await cleanNamespaces(client, { dryRun: false, log: (l) => lines.push(l), live, dead, now: NOW, timeoutMs: 1_000, ...rules });
    return { server, lines, problems, deleted: deleted(server) };
  }

  it('by default deletes a dead local run\'s namespace (a) and one older than 24h (b), keeps a young unrecorded one, skips a live run\'s and one terminating', async () => {
    const { server, lines, problems, deleted } = await clean();
    expect(problems).toEqual([]);
    expect(lines).toEqual([
      `deleted namespace zerodrop-aaaa1111 (${LABELS.run}=aaaa1111): its run on this machine ended without tearing down (record crashed)`,
      'skipped namespace zerodrop-bbbb2222: its run is still going',
      'namespace zerodrop-cccc3333 is already being deleted',
      `deleted namespace zerodrop-dddd4444 (${LABELS.run}=dddd4444): created 1d6h ago, older than 1d`,
      'kept namespace zerodrop-eeee5555: no finished run of this machine made it and it is 1h old (another machine\'s run may be using it; --older-than 1d or --all deletes it)',
      'kept namespace zerodrop-ffff6666: no finished run of this machine made it and it is of unknown age (another machine\'s run may be using it; --older-than 1d or --all deletes it)',
    ]);
    expect(deleted).toEqual(['zerodrop-aaaa1111', 'zerodrop-dddd4444']);
    // Through the run's own teardown path: pods at once, then the namespace in the background.
    const deletes = server.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.slice(0, 3).map((r) => r.path)).toEqual([
      '/api/v1/namespaces/zerodrop-aaaa1111/pods',
      '/api/v1/namespaces/zerodrop-aaaa1111/services',
      '/api/v1/namespaces/zerodrop-aaaa1111',
    ]);
    expect(deletes[0]?.query).toEqual({ gracePeriodSeconds: '0' });
    expect(deletes[2]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
  });

  it('(a) a young namespace goes only when the run that recorded it here is gone', async () => {
    expect((await clean({ dead: [] })).deleted).toEqual(['zerodrop-dddd4444']);
    // The record of a run still going protects it even when a dead record names it too.
    expect((await clean({ live: [record('live', { namespaces: ['zerodrop-aaaa1111', 'zerodrop-bbbb2222'] })] })).deleted).toEqual(['zerodrop-dddd4444']);
  });

  it('(b) --older-than moves the age limit both ways; a live run\'s namespace stays however old', async () => {
    const longer = await clean({ olderThanMs: 48 * HOUR });
    expect(longer.deleted).toEqual(['zerodrop-aaaa1111']);
    expect(longer.lines).toContain('kept namespace zerodrop-dddd4444: no finished run of this machine made it and it is 1d6h old (another machine\'s run may be using it; --older-than 2d or --all deletes it)');
    const shorter = await clean({ olderThanMs: 30 * 60_000 });
    expect(shorter.deleted).toEqual(['zerodrop-aaaa1111', 'zerodrop-dddd4444', 'zerodrop-eeee5555']);
    expect(shorter.lines).toContain(`deleted namespace zerodrop-eeee5555 (${LABELS.run}=eeee5555): created 1h ago, older than 30m`);
    expect(shorter.deleted).not.toContain('zerodrop-bbbb2222');
  });

  it('(c) --all deletes every labelled namespace but a live run\'s, whatever its age', async () => {
    const { lines, deleted } = await clean({ all: true, dead: [] });
    expect(deleted).toEqual(['zerodrop-aaaa1111', 'zerodrop-dddd4444', 'zerodrop-eeee5555', 'zerodrop-ffff6666']);
    expect(lines).toContain(`deleted namespace zerodrop-ffff6666 (${LABELS.run}=ffff6666): --all`);
    expect(lines).toContain('skipped namespace zerodrop-bbbb2222: its run is still going');
    expect((await clean({ all: false, dead: [] })).deleted).toEqual(['zerodrop-dddd4444']);
  });

  it('with --dry-run lists what would go and why, and sends no DELETE', async () => {
    const { server, lines } = await clean({ dryRun: true });
    expect(lines.filter((l) => l.startsWith('would delete'))).toEqual([
      `would delete namespace zerodrop-aaaa1111 (${LABELS.run}=aaaa1111): its run on this machine ended without tearing down (record crashed)`,
      `would delete namespace zerodrop-dddd4444 (${LABELS.run}=dddd4444): created 1d6h ago, older than 1d`,
    ]);
    expect(server.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
  });

  it('formats ages for its lines', () => {
    expect([formatAge(0), formatAge(12_000), formatAge(90 * 60_000), formatAge(24 * HOUR), formatAge(26 * HOUR + 61_000)]).toEqual(['0s', '12s', '1h30m', '1d', '1d2h']);
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

  async function kindNodes(labelled: boolean, runNamespaces: string[] = []): Promise<string> {
    const server = await fakeServer();
    const labels = labelled ? { [CREATED_BY_LABEL.key]: CREATED_BY_LABEL.value } : {};
    server.put('/api/v1/nodes', { metadata: { name: 'control-plane', labels } });
    for (const name of runNamespaces) server.put('/api/v1/namespaces', namespace(name, runLabel(name.replace(/^zerodrop-/, ''))));
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

  it('leaves a dead run\'s cluster that a run still going on this machine created again or uses (keeping the record for later)', async () => {
    const kind = fakeKind(['zerodrop', 'zerodrop-b'], { zerodrop: await kindNodes(true), 'zerodrop-b': await kindNodes(true, ['zerodrop-11112222', 'zerodrop-live0001']) });
    const live = [record('again', { kindClusters: ['zerodrop'] }), record('reuser', { namespaces: ['zerodrop-live0001'] })];
    const runs = [run(['zerodrop', 'zerodrop-b'])];
    const lines: string[] = [];
    await cleanKindClusters(runs, kind, { dryRun: false, log: (l) => lines.push(l), live });
    expect(kind.deleted).toEqual([]);
    expect(lines).toEqual([
      'skipped kind cluster zerodrop: run again, still going on this machine, created it again',
      'skipped kind cluster zerodrop-b: a run still going on this machine uses it (namespace zerodrop-live0001)',
    ]);
    expect(runs[0]?.problems).toEqual(['kind cluster zerodrop-b: a run still going on this machine uses it']);
    // Control: the same clusters with no run going are deleted (namespaces of dead runs do not hold a cluster).
    const again = [run(['zerodrop', 'zerodrop-b'])];
    await cleanKindClusters(again, kind, { dryRun: false, log: () => {}, live: [] });
    expect(kind.deleted).toEqual(['zerodrop', 'zerodrop-b']);
  });

  it('labels every node of the clusters it creates', async () => {
    const { kindConfig } = await import('../providers/kind/kind.ts');
    const { parse } = await import('yaml');
    const config = parse(kindConfig({ workers: 2 })) as { nodes: { labels?: Record<string, string> }[] };
    expect(config.nodes.map((n) => n.labels?.[CREATED_BY_LABEL.key])).toEqual(['zerodrop', 'zerodrop', 'zerodrop']);
  });
});
