// What the local provider's model of Kubernetes assumes (docs/local-provider.md), measured on a netns
// cluster of each pinned release: the delete's way into the EndpointSlice, kube-proxy's programming,
// a rolling update's steps (maxSurge 1, maxUnavailable 0), the Eviction API against a
// PodDisruptionBudget, and what a force delete leaves the container. One cluster at a time, each
// removed before the next; every wait is bounded.
//
// The times are those this process saw (the kube provider's watches, observers.ts), as a scenario's
// Timeline has them; kube-proxy's programming is what the nodes report on :10249, diffed over the run.

import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Recorder } from '../observe/recorder.ts';
import type { TimelineEvent } from '../model/timeline.ts';
import { serverSideApply } from '../providers/kube/apply.ts';
import { KubeClient } from '../providers/kube/client.ts';
import type { KubeObject } from '../providers/kube/list-watch.ts';
import { LABELS, MAIN_CONTAINER, NODE_IMAGE } from '../providers/kube/manifests.ts';
import { observeNamespace } from '../providers/kube/observers.ts';
import { startNetnsCluster, type NetnsCluster } from '../providers/netns/cluster.ts';
import type { BenchRow } from './table.ts';

const NAMESPACE = 'zerodrop-model';
const PORT = 8080;
/** The deployment's and the force-deleted pods' grace: short, so that a SIGKILL at its end shows within a bounded wait. */
const GRACE_SECONDS = 5;

/** How many of each measurement, per release. */
export interface ModelTimingCounts {
  deletes: number;
  rollouts: number;
  evictions: number;
  forceDeletes: number;
  /** Deprogramming as traffic shows it: this many deletes after a quiet spell, and this many rollouts (none when absent). */
  deprograms?: number;
}

export const DEFAULT_COUNTS: ModelTimingCounts = { deletes: 5, rollouts: 2, evictions: 3, forceDeletes: 2, deprograms: 4 };
export const QUICK_COUNTS: ModelTimingCounts = { deletes: 2, rollouts: 1, evictions: 1, forceDeletes: 1, deprograms: 2 };

// ---- Prometheus histograms (kube-proxy's /metrics) ----

export interface Histogram {
  /** Cumulative counts by upper bound, ascending; the last bound is +Inf. */
  buckets: [number, number][];
  sum: number;
  count: number;
}

/**
 * The histogram `name` in Prometheus text format, its series summed over every label but `le`
 * (https://prometheus.io/docs/instrumenting/exposition_formats/#histograms-and-summaries), or
 * undefined when the text has none.
 */
export function parseHistogram(text: string, name: string): Histogram | undefined {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line.trim());
    if (!m) continue;
    const [, metric, labels = '', raw] = m;
    const value = Number(raw);
    if (metric === `${name}_bucket`) {
      const le = /(?:^|[{,])le="([^"]*)"/.exec(labels)?.[1];
      if (le === undefined) continue;
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
      seen = true;
    } else if (metric === `${name}_sum`) {
      sum += value;
      seen = true;
    } else if (metric === `${name}_count`) {
      count += value;
      seen = true;
    }
  }
  if (!seen) return undefined;
  return { buckets: [...buckets].sort((a, b) => a[0] - b[0]), sum, count };
}

/** What `after` holds beyond `before` (a counter's growth between two scrapes); several nodes' growths added up. */
export function histogramGrowth(pairs: readonly { before: Histogram | undefined; after: Histogram | undefined }[]): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const { before, after } of pairs) {
    if (!after) continue;
    const earlier = new Map(before?.buckets ?? []);
    for (const [bound, n] of after.buckets) buckets.set(bound, (buckets.get(bound) ?? 0) + n - (earlier.get(bound) ?? 0));
    sum += after.sum - (before?.sum ?? 0);
    count += after.count - (before?.count ?? 0);
  }
  return { buckets: [...buckets].sort((a, b) => a[0] - b[0]), sum, count };
}

/** "n: x % within 0.5 s, ...; mean m s": the share within each of `bounds` that is a bucket bound (others cannot be told). */
export function describeHistogram(h: Histogram, bounds: readonly number[]): string {
  if (h.count <= 0) return 'none';
  const within = bounds
    .map((b) => ({ b, n: h.buckets.find(([bound]) => bound === b)?.[1] }))
    .filter((x): x is { b: number; n: number } => x.n !== undefined)
    .map(({ b, n }) => `${formatShare(n / h.count)} within ${b} s`);
  return `${h.count}: ${within.join(', ')}; mean ${(h.sum / h.count).toFixed(2)} s`;
}

function formatShare(share: number): string {
  const pct = share * 100;
  return `${pct >= 99.5 && pct < 100 ? pct.toFixed(1) : Math.round(pct)} %`;
}

// ---- samples ----

export interface Spread {
  n: number;
  min: number;
  median: number;
  max: number;
}

export function spreadOf(values: readonly number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { n: sorted.length, min: sorted[0]!, median, max: sorted.at(-1)! };
}

/** "median 44 ms (21-149, 17)", in ms below 10 s, else s. */
export function formatSpread(s: Spread | undefined): string {
  if (!s) return 'not seen';
  const seconds = s.max >= 10_000;
  const f = (ms: number) => (seconds ? (ms / 1000).toFixed(1) : String(Math.round(ms)));
  const unit = seconds ? 's' : 'ms';
  return s.n === 1 ? `${f(s.median)} ${unit} (1)` : `median ${f(s.median)} ${unit} (${f(s.min)}-${f(s.max)}, ${s.n})`;
}

// ---- what the watches saw ----

/** The first event after `from` (inclusive) that matches. */
function firstAfter(events: readonly TimelineEvent[], from: number, match: (e: TimelineEvent) => boolean): TimelineEvent | undefined {
  return events.find((e) => e.t >= from && match(e));
}

/**
 * A deleted pod's way out of its Service, from the delete's API response at `deletedAt`: when the
 * slice first showed it terminating, when its container was seen to exit (its terminated status,
 * or the pod's removal when no status came first), and when the slice dropped it.
 */
export function deleteSteps(events: readonly TimelineEvent[], pod: string, deletedAt: number): { toTerminating?: number; exitToRemoval?: number } {
  const terminating = firstAfter(events, deletedAt, (e) => e.kind === 'endpoint-changed' && e.pod === pod && e.detail?.['terminating'] === true);
  const removed = firstAfter(events, deletedAt, (e) => e.kind === 'endpoint-changed' && e.pod === pod && e.detail?.['removed'] === true);
  const exit = firstAfter(events, deletedAt, (e) => (e.kind === 'exit' || e.kind === 'pod-removed') && e.pod === pod);
  return {
    ...(terminating ? { toTerminating: terminating.t - deletedAt } : {}),
    ...(exit && removed ? { exitToRemoval: removed.t - exit.t } : {}),
  };
}

export interface RolloutSteps {
  /** The template change -> the first new pod. */
  toFirstCreated?: number;
  /** Each new pod: created -> Ready. */
  createdToReady: number[];
  /** Each new pod's Ready -> the next old pod's delete. */
  readyToOldDeleted: number[];
  /** Each old pod's delete -> the next new pod created (none after the last). */
  oldDeletedToNextCreated: number[];
  /** The template change -> every new pod Ready and every old pod gone. */
  total?: number;
  /** Old pods deleted before as many new pods were Ready (maxUnavailable 0 forbids it). */
  orderViolations: number;
}

/** The steps of one rolling update that began at `changedAt`, old pods `old`, `replicas` of them. */
export function rolloutSteps(events: readonly TimelineEvent[], changedAt: number, old: ReadonlySet<string>, replicas: number): RolloutSteps {
  const after = events.filter((e) => e.t >= changedAt && e.pod !== undefined);
  const isNew = (e: TimelineEvent) => !old.has(e.pod!);
  const created = after.filter((e) => e.kind === 'pod-created' && isNew(e));
  const ready = after.filter((e) => e.kind === 'pod-ready' && isNew(e));
  const deleted = after.filter((e) => e.kind === 'delete-issued' && !isNew(e));
  const removed = after.filter((e) => e.kind === 'pod-removed' && !isNew(e));
  const createdAt = new Map(created.map((e) => [e.pod!, e.t]));
  const steps: RolloutSteps = { createdToReady: [], readyToOldDeleted: [], oldDeletedToNextCreated: [], orderViolations: 0 };
  if (created[0]) steps.toFirstCreated = created[0].t - changedAt;
  for (const r of ready) {
    const c = createdAt.get(r.pod!);
    if (c !== undefined) steps.createdToReady.push(r.t - c);
    const d = deleted.find((e) => e.t >= r.t);
    if (d) steps.readyToOldDeleted.push(d.t - r.t);
  }
  for (const d of deleted) {
    const c = created.find((e) => e.t >= d.t);
    if (c) steps.oldDeletedToNextCreated.push(c.t - d.t);
    if (ready.filter((e) => e.t <= d.t).length < deleted.filter((e) => e.t <= d.t).length) steps.orderViolations++;
  }
  const firstReadyOf = new Map<string, number>();
  for (const r of ready) if (!firstReadyOf.has(r.pod!)) firstReadyOf.set(r.pod!, r.t);
  if (firstReadyOf.size >= replicas && removed.length >= old.size) steps.total = Math.max(...firstReadyOf.values(), ...removed.map((e) => e.t)) - changedAt;
  return steps;
}

// ---- one release ----

export interface ForceDeleteSample {
  /** The delete sent -> the API answering 404 for the pod. */
  objectGoneMs?: number;
  /** The delete sent -> the app's SIGTERM line on the held stream. */
  sigtermMs?: number;
  /** The delete sent -> the held stream's end: the process died (it ignores SIGTERM, so SIGKILL). */
  killedMs?: number;
}

export interface EvictionSample {
  /** The status of the eviction tried while the budget forbids it, and its causes' reasons. */
  refused: { status: number; causes: string[] };
  /** The replacement pod Ready -> the refused eviction's retry accepted (201). */
  readyToAcceptedMs?: number;
  retries: number;
}

/** One new connection of the probe: when it was opened (recorder clock), and which pod address answered it. */
export interface ProbeSample {
  t: number;
  ip: string;
}

/**
 * When new connections stopped reaching a deleted pod, from its delete: the last probe connection it
 * answered that was opened after the delete, or 0 when none was (deprogrammed before the first
 * probe after it). `everyMs` is the probe's resolution; undefined when the pod answered none at all.
 */
export function deprogrammedAfter(samples: readonly ProbeSample[], ip: string, deletedAt: number): number | undefined {
  if (!samples.some((s) => s.ip === ip)) return undefined;
  let last: number | undefined;
  for (const s of samples) if (s.ip === ip && s.t >= deletedAt) last = Math.max(last ?? s.t, s.t);
  return last === undefined ? 0 : last - deletedAt;
}

export interface ReleaseTimings {
  version: string;
  /** A delete after at least 2 s without an endpoint change -> the last new connection the pod answered (traffic through a NodePort). */
  quietDeprogram?: number[];
  /** A rolling update: each old pod's delete -> the last new connection it answered. */
  rolloutDeprogram?: number[];
  toTerminating: number[];
  exitToRemoval: number[];
  rollouts: RolloutSteps[];
  evictions: EvictionSample[];
  forceDeletes: ForceDeleteSample[];
  programming: Histogram;
  sync: Histogram;
}

/** The reference-backend's behaviour in a line of node: ready, a held stream that hears the SIGTERM, SIGTERM ignored when told. */
const APP = [
  "const http = require('node:http');",
  'const held = new Set();',
  "process.on('SIGTERM', () => { for (const r of held) r.write('SIGTERM\\n'); if (process.env.IGNORE_TERM !== '1') setTimeout(() => process.exit(0), 50); });",
  "http.createServer((q, r) => { if (q.url === '/whoami') return r.end(q.socket.localAddress.replace(/^::ffff:/, '')); if (q.url !== '/hold') return r.end('ok'); r.writeHead(200); r.write('open\\n'); held.add(r); q.on('close', () => held.delete(r)); })",
  `.listen(${PORT});`,
].join(' ');

function container(env: Record<string, string> = {}): Record<string, unknown> {
  return {
    name: MAIN_CONTAINER,
    image: NODE_IMAGE,
    command: ['node', '-e', APP],
    env: Object.entries(env).map(([name, value]) => ({ name, value })),
    readinessProbe: { httpGet: { port: PORT, path: '/healthz' }, periodSeconds: 1 },
  };
}

function objects(replicas: number): KubeObject[] {
  const meta = (name: string) => ({ name, namespace: NAMESPACE });
  const labels = { app: 'web', [LABELS.workload]: 'web' };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('web'),
      spec: {
        replicas,
        selector: { matchLabels: { app: 'web' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: { metadata: { labels }, spec: { terminationGracePeriodSeconds: GRACE_SECONDS, containers: [container()] } },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: meta('web'), spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: PORT }] } },
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('web'), spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } },
  ];
}

/** The deprogramming probe's workload: its preStop keeps a deleted pod serving, so only the balancer decides where new connections go. */
const PROBE_PRESTOP_SECONDS = 3;
const PROBE_NODE_PORT = 30_080;
/** Without an endpoint change anywhere in the cluster this long, kube-proxy's next sync is not held back by its minimum sync period (1 s). */
const QUIET_MS = 2_500;

function probeObjects(replicas: number): KubeObject[] {
  const meta = { name: 'drain', namespace: NAMESPACE };
  const labels = { app: 'drain', [LABELS.workload]: 'drain' };
  const main = { ...container(), lifecycle: { preStop: { sleep: { seconds: PROBE_PRESTOP_SECONDS } } } };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta,
      spec: {
        replicas,
        selector: { matchLabels: { app: 'drain' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: { metadata: { labels }, spec: { terminationGracePeriodSeconds: GRACE_SECONDS, containers: [main] } },
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { type: 'NodePort', selector: { app: 'drain' }, ports: [{ port: 80, targetPort: PORT, nodePort: PROBE_NODE_PORT }] } },
  ];
}

/**
 * A new connection (no keep-alive) to host:port every `everyMs` until stopped or `maxMs` has passed,
 * each bounded by a 2 s timeout, recording which pod address answered it.
 */
function probe(host: string, port: number, recorder: Recorder, signal: AbortSignal, everyMs = 5, maxMs = 60_000): { samples: ProbeSample[]; stop: () => Promise<void> } {
  const samples: ProbeSample[] = [];
  const stopper = new AbortController();
  const both = AbortSignal.any([signal, stopper.signal]);
  const inFlight = new Set<Promise<void>>();
  const one = () =>
    new Promise<void>((resolve) => {
      const t = recorder.now();
      const request = http.get({ host, port, path: '/whoami', agent: false, timeout: 2_000 }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          samples.push({ t, ip: body.trim() });
          resolve();
        });
        response.on('error', () => resolve());
      });
      request.on('timeout', () => request.destroy());
      request.on('error', () => resolve());
    });
  const loop = (async () => {
    const end = Date.now() + maxMs;
    while (!both.aborted && Date.now() < end) {
      const pending = one();
      inFlight.add(pending);
      void pending.finally(() => inFlight.delete(pending));
      await sleep(everyMs, undefined, { signal: both }).catch(() => undefined);
    }
  })();
  return {
    samples,
    stop: async () => {
      stopper.abort();
      await loop;
      await Promise.all(inFlight);
    },
  };
}

type Log = (line: string) => void;

async function until<T>(what: string, timeoutMs: number, signal: AbortSignal, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`model timings: ${what} not within ${timeoutMs / 1000} s`);
    await sleep(50, undefined, { signal });
  }
}

async function scrape(cluster: NetnsCluster, signal: AbortSignal): Promise<{ programming?: Histogram; sync?: Histogram }[]> {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const text = await (await fetch(`http://${node.ip}:10249/metrics`, { signal })).text();
      const programming = parseHistogram(text, 'kubeproxy_network_programming_duration_seconds');
      const sync = parseHistogram(text, 'kubeproxy_sync_proxy_rules_duration_seconds');
      return { ...(programming ? { programming } : {}), ...(sync ? { sync } : {}) };
    }),
  );
}

/** Holds GET /hold open on the pod; resolves the times (recorder clock) of its SIGTERM line and of its end. */
function hold(ip: string, recorder: Recorder, signal: AbortSignal): Promise<{ opened: Promise<void>; sigterm: Promise<number | undefined>; ended: Promise<number> }> {
  return new Promise((resolveAll, rejectAll) => {
    let sigtermAt: number | undefined;
    let resolveOpen!: () => void;
    const opened = new Promise<void>((r) => (resolveOpen = r));
    let resolveEnd!: (t: number) => void;
    const ended = new Promise<number>((r) => (resolveEnd = r));
    const request = http.get({ host: ip, port: PORT, path: '/hold', signal }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (chunk.includes('open')) resolveOpen();
        if (chunk.includes('SIGTERM')) sigtermAt ??= recorder.now();
      });
      const end = () => resolveEnd(recorder.now());
      response.on('end', end);
      response.on('error', end);
      response.on('close', end);
      resolveAll({ opened, sigterm: ended.then(() => sigtermAt), ended });
    });
    request.on('error', (err) => {
      resolveEnd(recorder.now());
      rejectAll(err);
    });
  });
}

/** Measures one release on a fresh cluster, which it removes after. */
export async function measureRelease(version: string, counts: ModelTimingCounts, o: { signal: AbortSignal; log: Log }): Promise<ReleaseTimings> {
  const { signal, log } = o;
  await using cluster = await startNetnsCluster({ nodes: 2, kubeVersion: version, log, signal });
  const client = new KubeClient(cluster.kubeConfig());
  const recorder = new Recorder();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const replicas = 2;
  const result: ReleaseTimings = { version: cluster.version, toTerminating: [], exitToRemoval: [], rollouts: [], evictions: [], forceDeletes: [], programming: { buckets: [], sum: 0, count: 0 }, sync: { buckets: [], sum: 0, count: 0 } };
  try {
    await serverSideApply(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }, signal);
    await until('the namespace default ServiceAccount', 60_000, signal, async () => ((await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default`, { allow: [404] })).status === 200 ? true : undefined));
    const watched = await observeNamespace(client, NAMESPACE, recorder, stop.signal, { followLogs: false });
    const events = recorder.timeline.events;
    for (const object of objects(replicas)) await serverSideApply(client, object, signal);
    const readyPods = () => watched.pods.podsOf('web').filter((p) => p.ready && p.phase === 'Running');
    const settled = (what: string) =>
      until(what, 120_000, signal, () => {
        const pods = watched.pods.podsOf('web');
        return pods.length === replicas && pods.every((p) => p.ready && p.phase === 'Running') && watched.endpoints.readyPods('web').length === replicas ? pods : undefined;
      });
    await settled(`${replicas} ready pods of web`);
    const before = await scrape(cluster, signal);

    for (let k = 0; k < counts.deletes; k++) {
      const victim = readyPods()[0]!.name;
      await client.request('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods/${victim}`);
      const deletedAt = recorder.now();
      await until(`the slice to drop ${victim}`, 60_000, signal, () => (events.some((e) => e.kind === 'endpoint-changed' && e.pod === victim && e.detail?.['removed'] === true) ? true : undefined));
      const steps = deleteSteps(events, victim, deletedAt);
      if (steps.toTerminating !== undefined) result.toTerminating.push(steps.toTerminating);
      if (steps.exitToRemoval !== undefined) result.exitToRemoval.push(steps.exitToRemoval);
      await settled(`web back to ${replicas} ready pods after delete ${k + 1}`);
    }
    log(`${version}: ${counts.deletes} deletes measured`);

    for (let k = 0; k < counts.rollouts; k++) {
      const old = new Set(watched.pods.podsOf('web').map((p) => p.name));
      const changedAt = recorder.now();
      await client.request('PATCH', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/web`, {
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: { template: { metadata: { annotations: { 'zerodrop.dev/rollout': `${Date.now()}` } } } } },
      });
      await until(`rollout ${k + 1}`, 180_000, signal, () => {
        const pods = watched.pods.podsOf('web');
        return pods.length === replicas && pods.every((p) => !old.has(p.name) && p.ready) && [...old].every((name) => events.some((e) => e.kind === 'pod-removed' && e.pod === name)) ? true : undefined;
      });
      result.rollouts.push(rolloutSteps(events, changedAt, old, replicas));
    }
    log(`${version}: ${counts.rollouts} rollouts measured`);

    const evict = (pod: string) =>
      client.request<{ details?: { causes?: { reason?: string }[] } }>('POST', `/api/v1/namespaces/${NAMESPACE}/pods/${pod}/eviction`, {
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NAMESPACE } },
        allow: [429],
      });
    for (let k = 0; k < counts.evictions; k++) {
      await settled(`web settled before eviction ${k + 1}`);
      // The disruption controller must have counted both pods healthy, or the first eviction is refused too.
      await until('the budget to allow one disruption', 60_000, signal, async () => {
        const pdb = (await client.request<{ status?: { disruptionsAllowed?: number } }>('GET', `/apis/policy/v1/namespaces/${NAMESPACE}/poddisruptionbudgets/web`)).body;
        return (pdb.status?.disruptionsAllowed ?? 0) >= 1 ? true : undefined;
      });
      const [first, second] = readyPods().map((p) => p.name);
      const firstAnswer = await evict(first!);
      if (firstAnswer.status !== 201) throw new Error(`model timings: eviction of ${first} with one disruption allowed answered ${firstAnswer.status}`);
      const evictedAt = recorder.now();
      const refusal = await evict(second!);
      const sample: EvictionSample = { refused: { status: refusal.status, causes: (refusal.body.details?.causes ?? []).map((c) => c.reason ?? '?') }, retries: 0 };
      if (refusal.status !== 201) {
        const acceptedAt = await until(`eviction ${k + 1} of ${second} to be accepted`, 120_000, signal, async () => {
          sample.retries++;
          return (await evict(second!)).status === 201 ? recorder.now() : undefined;
        });
        const replacementReady = firstAfter(events, evictedAt, (e) => e.kind === 'pod-ready' && e.pod !== first && e.pod !== second);
        if (replacementReady) sample.readyToAcceptedMs = acceptedAt - replacementReady.t;
      }
      result.evictions.push(sample);
      await until(`${second} gone`, 60_000, signal, () => (events.some((e) => e.kind === 'pod-removed' && e.pod === second) ? true : undefined));
    }
    log(`${version}: ${counts.evictions} evictions measured`);

    for (let k = 0; k < counts.forceDeletes; k++) {
      const name = `forced-${k + 1}`;
      await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NAMESPACE, labels: { [LABELS.workload]: 'forced' } },
          spec: { terminationGracePeriodSeconds: GRACE_SECONDS, containers: [container({ IGNORE_TERM: '1' })] },
        },
        signal,
      });
      const ip = await until(`${name} ready`, 120_000, signal, () => watched.pods.podsOf('forced').find((p) => p.name === name && p.ready)?.ip);
      const held = await hold(ip, recorder, stop.signal);
      await held.opened;
      // From the request, not its response: the API writes deletionGracePeriodSeconds 0 before it
      // removes the object, and the node may already have sent the signal when the response arrives.
      const deletedAt = recorder.now();
      // What `kubectl delete --grace-period=0 --force` sends.
      await client.request('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods/${name}`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 } });
      const sample: ForceDeleteSample = {};
      const gone = await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods/${name}`, { allow: [404] });
      if (gone.status === 404) sample.objectGoneMs = recorder.now() - deletedAt;
      // The wait ends with the release (stop), so that no timer outlives it.
      const endedAt = await Promise.race([held.ended, sleep((GRACE_SECONDS + 10) * 1000, undefined, { signal: stop.signal }).then(() => undefined)]);
      if (endedAt !== undefined) sample.killedMs = endedAt - deletedAt;
      const sigtermAt = endedAt === undefined ? undefined : await held.sigterm;
      if (sigtermAt !== undefined) sample.sigtermMs = sigtermAt - deletedAt;
      result.forceDeletes.push(sample);
    }
    log(`${version}: ${counts.forceDeletes} force deletes measured`);

    if ((counts.deprograms ?? 0) > 0) {
      const { quiet, rollout } = await measureDeprogramming(cluster, client, watched, recorder, { deprograms: counts.deprograms ?? 0, rollouts: counts.rollouts, replicas }, signal, stop.signal);
      result.quietDeprogram = quiet;
      result.rolloutDeprogram = rollout;
      log(`${version}: deprogramming measured by traffic (${quiet.length} quiet deletes, ${rollout.length} old pods of ${counts.rollouts} rollouts)`);
    }

    // kube-proxy applies the last changes up to a sync period later: let them land in the histograms.
    await sleep(3_000, undefined, { signal });
    const after = await scrape(cluster, signal);
    result.programming = histogramGrowth(after.map((a, i) => ({ before: before[i]?.programming, after: a.programming })));
    result.sync = histogramGrowth(after.map((a, i) => ({ before: before[i]?.sync, after: a.sync })));
    stop.abort();
    await watched.stopped();
    return result;
  } finally {
    stop.abort();
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * When kube-proxy stops sending new connections to a deleted pod, as traffic through a NodePort shows
 * it (its programming metric misses deletes): after a quiet spell, and in a rolling update, where
 * each delete follows the new pod's readiness change by tens of milliseconds.
 */
async function measureDeprogramming(
  cluster: NetnsCluster,
  client: KubeClient,
  watched: Awaited<ReturnType<typeof observeNamespace>>,
  recorder: Recorder,
  o: { deprograms: number; rollouts: number; replicas: number },
  signal: AbortSignal,
  stopSignal: AbortSignal,
): Promise<{ quiet: number[]; rollout: number[] }> {
  const events = recorder.timeline.events;
  const target = { host: cluster.nodes[0]!.ip, port: PROBE_NODE_PORT };
  for (const object of probeObjects(o.replicas)) await serverSideApply(client, object, signal);
  const pods = () => watched.pods.podsOf('drain');
  const settled = (what: string) =>
    until(what, 120_000, signal, () => {
      const all = pods();
      return all.length === o.replicas && all.every((p) => p.ready && p.phase === 'Running') && watched.endpoints.readyPods('drain').length === o.replicas ? all : undefined;
    });
  await settled(`${o.replicas} ready pods of drain`);
  // The NodePort is programmed some time after the endpoints are ready: every pod must answer first.
  await until('every drain pod to answer through the NodePort', 30_000, signal, async () => {
    const check = probe(target.host, target.port, recorder, stopSignal);
    await sleep(300, undefined, { signal });
    await check.stop();
    const answered = new Set(check.samples.map((x) => x.ip));
    return pods().every((p) => p.ip !== undefined && answered.has(p.ip)) ? true : undefined;
  });
  const quiet: number[] = [];
  for (let k = 0; k < o.deprograms; k++) {
    await settled(`drain back to ${o.replicas} ready pods before delete ${k + 1}`);
    await sleep(QUIET_MS, undefined, { signal });
    const probing = probe(target.host, target.port, recorder, stopSignal);
    await sleep(300, undefined, { signal });
    const victim = pods().find((p) => p.ready && p.ip !== undefined)!;
    const deletedAt = recorder.now();
    await client.request('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods/${victim.name}`);
    // Within its preStop the pod still serves: where new connections go is the balancer's doing alone.
    await sleep((PROBE_PRESTOP_SECONDS - 0.5) * 1000, undefined, { signal });
    await probing.stop();
    const lag = deprogrammedAfter(probing.samples, victim.ip!, deletedAt);
    if (lag !== undefined) quiet.push(lag);
  }
  const rollout: number[] = [];
  for (let k = 0; k < o.rollouts; k++) {
    await settled(`drain settled before rollout ${k + 1}`);
    const old = pods().map((p) => ({ name: p.name, ip: p.ip }));
    const probing = probe(target.host, target.port, recorder, stopSignal);
    const changedAt = recorder.now();
    await client.request('PATCH', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/drain`, {
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { template: { metadata: { annotations: { 'zerodrop.dev/rollout': `${Date.now()}` } } } } },
    });
    // Done when every old pod is past its preStop: each still served until then.
    await until(`drain rollout ${k + 1}`, 180_000, signal, () =>
      old.every((p) => events.some((e) => e.kind === 'delete-issued' && e.pod === p.name && e.t >= changedAt && recorder.now() - e.t > (PROBE_PRESTOP_SECONDS - 0.5) * 1000)) ? true : undefined,
    );
    await probing.stop();
    for (const p of old) {
      const deleted = events.find((e) => e.kind === 'delete-issued' && e.pod === p.name && e.t >= changedAt);
      const lag = deleted && p.ip !== undefined ? deprogrammedAfter(probing.samples, p.ip, deleted.t) : undefined;
      if (lag !== undefined) rollout.push(lag);
    }
  }
  return { quiet, rollout };
}

// ---- the table ----

const PROGRAMMING_BOUNDS = [0.25, 0.5, 1, 2, 3];
const SYNC_BOUNDS = [0.016, 0.032, 0.064, 0.128];

/** One line per measurement: its name, one cell per release, and what the local model assumes. */
export function timingLines(releases: readonly ReleaseTimings[]): { step: string; cells: string[]; model: string }[] {
  const per = (f: (r: ReleaseTimings) => string) => releases.map(f);
  const flat = (f: (s: RolloutSteps) => number[]) => (r: ReleaseTimings) => formatSpread(spreadOf(r.rollouts.flatMap(f)));
  const one = (f: (s: RolloutSteps) => number | undefined) => (r: ReleaseTimings) => formatSpread(spreadOf(r.rollouts.map(f).filter((x): x is number => x !== undefined)));
  const forced = (f: (s: ForceDeleteSample) => number | undefined) => (r: ReleaseTimings) => {
    const values = r.forceDeletes.map(f);
    const seen = values.filter((x): x is number => x !== undefined);
    const missing = values.length - seen.length;
    return `${formatSpread(spreadOf(seen))}${missing > 0 ? `; not seen in ${missing}` : ''}`;
  };
  return [
    { step: 'pod delete (API response) -> endpoint `terminating` in the slice', cells: per((r) => formatSpread(spreadOf(r.toTerminating))), model: '0 ms' },
    { step: 'container exit (status, or pod removal) -> endpoint removed', cells: per((r) => formatSpread(spreadOf(r.exitToRemoval))), model: '0 ms' },
    { step: 'slice change -> kube-proxy applied (`kubeproxy_network_programming_duration_seconds`, both nodes)', cells: per((r) => describeHistogram(r.programming, PROGRAMMING_BOUNDS)), model: '`programmingDelayMs`' },
    {
      step: `delete after ${QUIET_MS / 1000} s without an endpoint change -> no new connection reaches the pod (a new connection every 5 ms through a NodePort; the pod serves through its ${PROBE_PRESTOP_SECONDS} s preStop)`,
      cells: per((r) => (r.quietDeprogram ? formatSpread(spreadOf(r.quietDeprogram)) : 'not measured')),
      model: '`programmingDelayMs` (200 ms in most scenarios)',
    },
    { step: 'rolling update: an old pod deleted -> no new connection reaches it (the same probe)', cells: per((r) => (r.rolloutDeprogram ? formatSpread(spreadOf(r.rolloutDeprogram)) : 'not measured')), model: '`programmingDelayMs`' },
    { step: 'one kube-proxy sync (`kubeproxy_sync_proxy_rules_duration_seconds`)', cells: per((r) => describeHistogram(r.sync, SYNC_BOUNDS)), model: 'not modelled apart' },
    { step: 'rolling update: template change -> first new pod', cells: per(one((s) => s.toFirstCreated)), model: '0 ms' },
    { step: 'rolling update: new pod created -> Ready (readiness probe every 1 s)', cells: per(flat((s) => s.createdToReady)), model: 'the pod\'s start + first probe' },
    { step: 'rolling update: new pod Ready -> an old pod deleted', cells: per(flat((s) => s.readyToOldDeleted)), model: '0 ms' },
    { step: 'rolling update: old pod deleted -> next new pod created', cells: per(flat((s) => s.oldDeletedToNextCreated)), model: '0 ms' },
    { step: 'rolling update of 2 replicas: template change -> all new Ready, old gone', cells: per(one((s) => s.total)), model: 'the pods\' starts and drains' },
    { step: 'rolling update: old pod deleted before its replacement was Ready', cells: per((r) => `${r.rollouts.reduce((n, s) => n + s.orderViolations, 0)} of ${r.rollouts.length} rollouts`), model: 'never' },
    {
      step: 'eviction while the budget forbids it (maxUnavailable 1, one pod evicted)',
      cells: per((r) => [...new Set(r.evictions.map((e) => `${e.refused.status}${e.refused.causes.length > 0 ? ` ${e.refused.causes.join(',')}` : ''}`))].join('; ') || 'not tried'),
      model: '429',
    },
    { step: 'replacement Ready -> the refused eviction accepted (retried every 50 ms plus the request)', cells: per((r) => formatSpread(spreadOf(r.evictions.flatMap((e) => (e.readyToAcceptedMs === undefined ? [] : [e.readyToAcceptedMs]))))), model: '0 ms (budget counted live)' },
    { step: 'force delete (`--grace-period=0 --force`, from the request) -> object gone (GET 404)', cells: per(forced((s) => s.objectGoneMs)), model: 'at once' },
    { step: `force delete -> SIGTERM in the container (grace ${GRACE_SECONDS} s, no preStop)`, cells: per(forced((s) => s.sigtermMs)), model: 'at once (preStop up to 1 s first)' },
    { step: 'force delete -> container killed (SIGTERM ignored, so SIGKILL)', cells: per(forced((s) => s.killedMs)), model: '2 s after SIGTERM' },
  ];
}

export function formatTimings(releases: readonly ReleaseTimings[]): string {
  const line = (c: readonly string[]) => `| ${c.map((s) => s.replaceAll('|', '\\|')).join(' | ')} |`;
  const header = ['step', ...releases.map((r) => r.version), 'local model'];
  return [line(header), line(header.map(() => '---')), ...timingLines(releases).map((l) => line([l.step, ...l.cells, l.model]))].join('\n');
}

/** The bench's rows: one per release and measurement with samples, its median in ms. */
export function timingRows(releases: readonly ReleaseTimings[]): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const r of releases) {
    const add = (target: string, values: number[]) => {
      const s = spreadOf(values);
      rows.push({ bench: 'model', tool: 'netns', target: `${r.version} ${target}`, unit: 'ms', status: 'ok', ...(s ? { value: s.median, note: formatSpread(s) } : { note: 'not seen' }) });
    };
    add('delete -> terminating', r.toTerminating);
    add('exit -> removed', r.exitToRemoval);
    add('new Ready -> old deleted', r.rollouts.flatMap((s) => s.readyToOldDeleted));
    add('replacement Ready -> eviction accepted', r.evictions.flatMap((e) => (e.readyToAcceptedMs === undefined ? [] : [e.readyToAcceptedMs])));
    add('force delete -> killed', r.forceDeletes.flatMap((f) => (f.killedMs === undefined ? [] : [f.killedMs])));
    if (r.quietDeprogram) add('quiet delete -> deprogrammed (traffic)', r.quietDeprogram);
    if (r.rolloutDeprogram) add('rollout: old pod deleted -> deprogrammed (traffic)', r.rolloutDeprogram);
    if (r.programming.count > 0) rows.push({ bench: 'model', tool: 'netns', target: `${r.version} kube-proxy programming (mean)`, unit: 's', status: 'ok', value: r.programming.sum / r.programming.count, note: describeHistogram(r.programming, PROGRAMMING_BOUNDS) });
  }
  return rows;
}

/** Measures each release in turn; a release that fails is a row saying so, the others still run. */
export async function modelTimingsBench(o: { versions: readonly string[]; counts: ModelTimingCounts; signal: AbortSignal; log: Log }): Promise<{ rows: BenchRow[]; detail: Record<string, unknown>; table: string }> {
  const releases: ReleaseTimings[] = [];
  const failed: BenchRow[] = [];
  const errors: Record<string, string> = {};
  for (const version of o.versions) {
    o.log(`model: Kubernetes ${version}`);
    try {
      releases.push(await measureRelease(version, o.counts, o));
    } catch (error) {
      if (o.signal.aborted) throw error;
      const message = (error as Error).message.split('\n')[0] ?? String(error);
      o.log(`model: ${version} failed: ${message}`);
      errors[version] = (error as Error).stack ?? message;
      failed.push({ bench: 'model', tool: 'netns', target: version, unit: 'ms', status: 'failed', note: message });
    }
  }
  const table = releases.length > 0 ? formatTimings(releases) : '';
  return { rows: [...timingRows(releases), ...failed], detail: { counts: o.counts, releases, errors, table }, table };
}
