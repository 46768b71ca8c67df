// The cluster part of `zerodrop clean` against the fake API server (request shapes) and a fake kind
// CLI: there is no Docker engine on the test machine.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { FakeApiServer } from '../../test-support/fake-api-server.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { helmUninstallArgs } from '../providers/kube/helm.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { CREATED_BY_LABEL } from '../providers/kind/kind.ts';
import { cleanKindClusters, cleanNamespaces, formatAge, type HelmCli, type KindCli } from './clean-clusters.ts';
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
    // Through the run's own teardown path: controllers orphaned, pods at once, then the namespace in the background.
    const deletes = server.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.slice(0, 5).map((r) => r.path)).toEqual([
      '/apis/apps/v1/namespaces/zerodrop-aaaa1111/deployments',
      '/apis/apps/v1/namespaces/zerodrop-aaaa1111/replicasets',
      '/api/v1/namespaces/zerodrop-aaaa1111/pods',
      '/api/v1/namespaces/zerodrop-aaaa1111/services',
      '/api/v1/namespaces/zerodrop-aaaa1111',
    ]);
    expect(deletes[2]?.query).toEqual({ gracePeriodSeconds: '0' });
    expect(deletes[4]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
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

describe('zerodrop clean: Helm releases in a namespace that goes', () => {
  /** One revision of a release as Helm 3's secret driver stores it (pkg/storage/driver/secrets.go). */
  function releaseSecret(release: string, revision: number, status = 'deployed') {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'helm.sh/release.v1',
      metadata: { name: `sh.helm.release.v1.${release}.v${revision}`, labels: { owner: 'helm', name: release, status, version: String(revision) } },
      data: { release: 'SDRzSQ==' },
    };
  }

  const DEAD = 'zerodrop-aaaa1111';
  const OLD = 'zerodrop-dddd4444';

  async function cluster(secrets: Record<string, ReturnType<typeof releaseSecret>[]> = {}) {
    const server = await fakeServer();
    const objects = [
      namespace(DEAD, runLabel('aaaa1111'), 'Active', 1 * HOUR),
      namespace('zerodrop-bbbb2222', runLabel('bbbb2222'), 'Active', 48 * HOUR),
      namespace('zerodrop-cccc3333', runLabel('cccc3333'), 'Terminating', 48 * HOUR),
      namespace(OLD, runLabel('dddd4444'), 'Active', 30 * HOUR),
      namespace('zerodrop-eeee5555', runLabel('eeee5555'), 'Active', 1 * HOUR),
    ];
    for (const ns of objects) server.put('/api/v1/namespaces', ns);
    for (const [ns, list] of Object.entries(secrets)) for (const secret of list) server.put(`/api/v1/namespaces/${ns}/secrets`, secret);
    server.respond((req) => {
      const name = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(req.path)?.[1];
      const ns = objects.find((o) => o.metadata.name === name);
      return req.method === 'GET' && ns ? { status: 200, body: ns } : undefined;
    });
    return { server, client: KubeClient.forServer(server.url) };
  }

  interface HelmCall {
    argv: string[];
    kubeconfigFile: string;
    /** The kubeconfig file at the time of the call: its mode and text, or undefined when it was not there. */
    file: { mode: number; text: string } | undefined;
    /** Namespaces already sent a DELETE when helm ran. */
    deletedBefore: (string | undefined)[];
  }

  /** A helm that records its argv (and fails for the releases in `failing`), or one that is not installed. */
  function fakeHelm(server: FakeApiServer, opts: { installed?: boolean; failing?: string[] } = {}): HelmCli & { calls: HelmCall[] } {
    const calls: HelmCall[] = [];
    return {
      calls,
      installed: () => opts.installed ?? true,
      run: async (argv) => {
        const kubeconfigFile = argv[argv.indexOf('--kubeconfig') + 1] ?? '';
        const file = existsSync(kubeconfigFile) ? { mode: statSync(kubeconfigFile).mode & 0o777, text: readFileSync(kubeconfigFile, 'utf8') } : undefined;
        calls.push({ argv, kubeconfigFile, file, deletedBefore: deleted(server) });
        if (opts.failing?.includes(argv[1] ?? '')) throw new Error(`helm uninstall: Error: uninstall: timed out waiting for the condition\nmore detail`);
      },
    };
  }

  const deleted = (server: FakeApiServer) => server.requests.filter((r) => r.method === 'DELETE' && /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)).map((r) => r.path.split('/').at(-1));
  const dead = [record('crashed', { namespaces: [DEAD] })];
  const live = [record('live', { namespaces: ['zerodrop-bbbb2222'] })];

  async function clean(secrets: Parameters<typeof cluster>[0], helmOpts: Parameters<typeof fakeHelm>[1] = {}, rules: Partial<Parameters<typeof cleanNamespaces>[1]> = {}) {
    const { server, client } = await cluster(secrets);
    const helm = fakeHelm(server, helmOpts);
    const lines: string[] = [];
    const problems = await cleanNamespaces(client, { dryRun: false, log: (l) => lines.push(l), live, dead, now: NOW, timeoutMs: 1_000, helm, ...rules });
    return { server, helm, lines, problems, deleted: deleted(server), uninstalled: helm.calls.map((c) => `${c.argv[1]} in ${c.argv[3]}`) };
  }

  it('uninstalls a release with helm uninstall --wait before it deletes the namespace, through a 0600 kubeconfig file that is gone after', async () => {
    const { server, helm, lines, problems, deleted } = await clean({ [DEAD]: [releaseSecret('eg-aaaa1111', 1)] });
    expect(problems).toEqual([]);
    const [call, ...more] = helm.calls;
    expect(more).toEqual([]);
    if (!call) throw new Error('helm was not run');
    expect(call.argv).toEqual(helmUninstallArgs({ release: 'eg-aaaa1111', namespace: DEAD, kubeconfigFile: call.kubeconfigFile }));
    expect(call.deletedBefore).toEqual([]);
    expect(deleted).toEqual([DEAD, OLD]);
    // The client's own kubeconfig, readable by this user only, in a zerodrop- temp dir removed after.
    expect(call.file?.mode).toBe(0o600);
    expect(call.file?.text).toContain(server.url);
    expect(dirname(call.kubeconfigFile).startsWith(join(tmpdir(), 'zerodrop-'))).toBe(true);
    expect(existsSync(dirname(call.kubeconfigFile))).toBe(false);
    expect(lines.slice(0, 2)).toEqual([
      `uninstalled Helm release eg-aaaa1111 of namespace ${DEAD}`,
      `deleted namespace ${DEAD} (${LABELS.run}=aaaa1111): its run on this machine ended without tearing down (record crashed)`,
    ]);
    // Found through Helm's own label: a namespace with no release Secrets needs no helm at all.
    const query = server.requests.find((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${OLD}/secrets`)?.query;
    expect(query).toEqual({ labelSelector: 'owner=helm' });
  });

  it('uninstalls each release once, however many revisions Helm keeps of it', async () => {
    const revisions = [releaseSecret('eg-aaaa1111', 1, 'superseded'), releaseSecret('eg-aaaa1111', 2, 'superseded'), releaseSecret('eg-aaaa1111', 3)];
    const { uninstalled, deleted } = await clean({ [DEAD]: [...revisions, releaseSecret('stunner-aaaa1111', 1)] });
    expect(uninstalled).toEqual([`eg-aaaa1111 in ${DEAD}`, `stunner-aaaa1111 in ${DEAD}`]);
    expect(deleted).toEqual([DEAD, OLD]);
  });

  it('ignores Secrets that are not Helm release records, even one a chart labelled owner=helm', async () => {
    const plain = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'tls', labels: { app: 'gateway' } } };
    const chartOwn = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'webhook-cert', labels: { owner: 'helm', name: 'webhook-cert' } } };
    const { uninstalled, deleted, problems } = await clean({ [DEAD]: [plain, chartOwn, releaseSecret('eg-aaaa1111', 1)] as ReturnType<typeof releaseSecret>[] }, { installed: false });
    // helm is missing, yet only the real release holds the namespace back.
    expect(problems.map((p) => p.problem)).toEqual([`namespace ${DEAD}: Helm release eg-aaaa1111 not uninstalled (helm not on PATH)`]);
    expect(uninstalled).toEqual([]);
    expect(deleted).toEqual([OLD]);
    // Without the release record, the namespace goes with no helm at all.
    const { uninstalled: again, deleted: deletedAgain } = await clean({ [DEAD]: [plain, chartOwn] as ReturnType<typeof releaseSecret>[] }, { installed: false });
    expect(again).toEqual([]);
    expect(deletedAgain).toEqual([DEAD, OLD]);
  });

  it('with --dry-run names the releases it would uninstall, and uninstalls and deletes nothing', async () => {
    const { server, uninstalled, lines } = await clean({ [DEAD]: [releaseSecret('eg-aaaa1111', 1)] }, {}, { dryRun: true });
    expect(uninstalled).toEqual([]);
    expect(server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(lines.slice(0, 2)).toEqual([
      `would uninstall Helm release eg-aaaa1111 of namespace ${DEAD}`,
      `would delete namespace ${DEAD} (${LABELS.run}=aaaa1111): its run on this machine ended without tearing down (record crashed)`,
    ]);
  });

  it('without helm on PATH keeps the namespace and says which release holds it and how to fix it; others still go', async () => {
    const { lines, problems, deleted, uninstalled } = await clean({ [DEAD]: [releaseSecret('ingress-nginx-aaaa1111', 1)] }, { installed: false });
    expect(uninstalled).toEqual([]);
    expect(deleted).toEqual([OLD]);
    expect(problems).toEqual([{ namespace: DEAD, problem: `namespace ${DEAD}: Helm release ingress-nginx-aaaa1111 not uninstalled (helm not on PATH)` }]);
    expect(lines[0]).toBe(
      `kept namespace ${DEAD}: Helm release ingress-nginx-aaaa1111 in it cannot be uninstalled, helm is not on PATH ` +
        `(install helm and run zerodrop clean again: deleting the namespace would lose Helm's record of the release's cluster-wide objects)`,
    );
  });

  it('when an uninstall fails keeps the namespace, with helm\'s first line as the problem, and still uninstalls the other releases', async () => {
    const { lines, problems, deleted, uninstalled } = await clean(
      { [DEAD]: [releaseSecret('eg-aaaa1111', 1), releaseSecret('stunner-aaaa1111', 1)], [OLD]: [releaseSecret('eg-dddd4444', 1)] },
      { failing: ['eg-aaaa1111'] },
    );
    expect(uninstalled).toEqual([`eg-aaaa1111 in ${DEAD}`, `stunner-aaaa1111 in ${DEAD}`, `eg-dddd4444 in ${OLD}`]);
    expect(deleted).toEqual([OLD]);
    expect(problems).toEqual([{ namespace: DEAD, problem: `namespace ${DEAD}: Helm release eg-aaaa1111: helm uninstall: Error: uninstall: timed out waiting for the condition` }]);
    expect(lines.slice(0, 2)).toEqual([
      `could not uninstall Helm release eg-aaaa1111 of namespace ${DEAD}: helm uninstall: Error: uninstall: timed out waiting for the condition; kept the namespace (fix that and run zerodrop clean again)`,
      `uninstalled Helm release stunner-aaaa1111 of namespace ${DEAD}`,
    ]);
  });

  it('keeps a namespace whose Helm releases it cannot list (no right to read its Secrets)', async () => {
    const { server, client } = await cluster();
    server.respond((req) => (req.path === `/api/v1/namespaces/${DEAD}/secrets` ? { status: 403, body: { kind: 'Status', message: 'secrets is forbidden' } } : undefined), { first: true });
    const lines: string[] = [];
    const problems = await cleanNamespaces(client, { dryRun: false, log: (l) => lines.push(l), live, dead, now: NOW, timeoutMs: 1_000, helm: fakeHelm(server) });
    expect(deleted(server)).toEqual([OLD]);
    expect(problems).toEqual([{ namespace: DEAD, problem: `namespace ${DEAD}: could not list its Helm releases (GET /api/v1/namespaces/${DEAD}/secrets: 403 secrets is forbidden)` }]);
    expect(lines[0]).toMatch(new RegExp(`^kept namespace ${DEAD}: could not list its Helm releases \\(.*403.*\\); deleting it could leave their cluster-wide objects behind$`));
  });

  it('leaves the releases of namespaces the rules keep: a live run\'s, one being deleted, a young one no record names', async () => {
    const secrets = Object.fromEntries(['bbbb2222', 'cccc3333', 'eeee5555'].map((id) => [`zerodrop-${id}`, [releaseSecret(`eg-${id}`, 1)]]));
    const { uninstalled, deleted, problems } = await clean(secrets);
    expect(uninstalled).toEqual([]);
    expect(deleted).toEqual([DEAD, OLD]);
    expect(problems).toEqual([]);
    // Control: --all takes the young one, releases first.
    expect((await clean(secrets, {}, { all: true })).uninstalled).toEqual(['eg-eeee5555 in zerodrop-eeee5555']);
  });
});

describe('zerodrop clean: cluster-scoped objects of a run whose namespace goes', () => {
  const CLASSES = '/apis/gateway.networking.k8s.io/v1/gatewayclasses';
  const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/namespaces/zerodrop-aaaa1111/gateways';
  const gatewayClass = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name, labels } });

  async function clean(opts: { dryRun?: boolean; failDelete?: boolean } = {}) {
    const server = await fakeServer();
    const namespaces = [namespace('zerodrop-aaaa1111', runLabel('aaaa1111'), 'Active', 1 * HOUR), namespace('zerodrop-eeee5555', runLabel('eeee5555'), 'Active', 1 * HOUR)];
    for (const ns of namespaces) server.put('/api/v1/namespaces', ns);
    // The fake server ignores label selectors: it lists all three, as a careless server would.
    const classes = [gatewayClass('zerodrop-aaaa1111', runLabel('aaaa1111')), gatewayClass('zerodrop-eeee5555', runLabel('eeee5555')), gatewayClass('envoy-gateway')];
    for (const gc of classes) server.put(CLASSES, gc);
    const gateway = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'zerodrop', namespace: 'zerodrop-aaaa1111', labels: runLabel('aaaa1111') } };
    server.put(GATEWAYS, gateway);
    // The run's chart release: uninstalled only after its GatewayClass is gone (helm is a stand-in).
    server.put('/api/v1/namespaces/zerodrop-aaaa1111/secrets', {
      apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1',
      metadata: { name: 'sh.helm.release.v1.eg-aaaa1111.v1', labels: { owner: 'helm', name: 'eg-aaaa1111', status: 'deployed', version: '1' } },
    });
    const order: string[] = [];
    const helm = { installed: () => true, run: async (argv: string[]) => void order.push(`helm ${argv[0] ?? ''} ${argv[1] ?? ''}`) };
    // What the API server does once the controller lets an object go: a deleted object is not found.
    const gone = new Set<string>();
    // STUNner's CRDs are not installed on this cluster: its Dataplane collection is not served.
    server.missing('/apis/stunner.l7mp.io/v1/dataplanes');
    server.respond((req) => {
      const name = req.path.split('/').at(-1);
      const found = [...namespaces, ...classes, gateway].find(
        (o) => o.metadata.name === name && req.path.startsWith(o.kind === 'Namespace' ? '/api/v1/namespaces/' : o.kind === 'Gateway' ? `${GATEWAYS}/` : `${CLASSES}/`),
      );
      if (req.method === 'DELETE' && opts.failDelete && req.path.startsWith(CLASSES)) return { status: 403, body: { kind: 'Status', code: 403, message: 'gatewayclasses is forbidden' } };
      if (req.method === 'DELETE' && found) {
        order.push(`delete ${req.path}`);
        gone.add(req.path);
      }
      if (req.method === 'GET' && gone.has(req.path) && found?.kind !== 'Namespace') return { status: 404, body: { kind: 'Status', code: 404 } };
      return req.method === 'GET' && found ? { status: 200, body: found } : undefined;
    });
    const lines: string[] = [];
    const problems = await cleanNamespaces(KubeClient.forServer(server.url), {
      dryRun: opts.dryRun ?? false,
      log: (l) => lines.push(l),
      live: [],
      dead: [record('crashed', { namespaces: ['zerodrop-aaaa1111'] })],
      now: NOW,
      timeoutMs: 1_000,
      helm,
    });
    const deletes = server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path);
    return { lines, problems, deletes, order };
  }

  it("deletes the dead run's GatewayClass (by its label, checked again on the object) before its namespace, and nothing of other runs", async () => {
    const { lines, problems, deletes } = await clean();
    expect(problems).toEqual([]);
    expect(deletes.filter((p) => p.startsWith(CLASSES))).toEqual([`${CLASSES}/zerodrop-aaaa1111`]);
    expect(deletes.indexOf(`${CLASSES}/zerodrop-aaaa1111`)).toBeLessThan(deletes.indexOf('/api/v1/namespaces/zerodrop-aaaa1111'));
    expect(lines).toContain(`deleted GatewayClass zerodrop-aaaa1111 (${LABELS.run}=aaaa1111)`);
  });

  it('goes in dependency order: the run\'s Gateway, then its GatewayClass, each gone before the next, then the chart, then the namespace', async () => {
    const { problems, order } = await clean();
    expect(problems).toEqual([]);
    expect(order).toEqual([`delete ${GATEWAYS}/zerodrop`, `delete ${CLASSES}/zerodrop-aaaa1111`, 'helm uninstall eg-aaaa1111', 'delete /api/v1/namespaces/zerodrop-aaaa1111']);
  });

  it('with --dry-run only names it; when its delete is refused the namespace stays, with the problem', async () => {
    const dry = await clean({ dryRun: true });
    expect(dry.deletes).toEqual([]);
    expect(dry.lines).toContain(`would delete GatewayClass zerodrop-aaaa1111 (${LABELS.run}=aaaa1111)`);
    const refused = await clean({ failDelete: true });
    expect(refused.deletes).not.toContain('/api/v1/namespaces/zerodrop-aaaa1111');
    expect(refused.problems).toEqual([{ namespace: 'zerodrop-aaaa1111', problem: expect.stringMatching(/^GatewayClass zerodrop-aaaa1111: .*403/) as unknown as string }]);
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
