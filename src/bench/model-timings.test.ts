// The model-timings bench's parsing and arithmetic, without a cluster: kube-proxy's histograms, the
// steps read off the watches' events, and the table. The measurements are `npm run bench -- --only model`.

import { describe, expect, it } from 'vitest';

import type { TimelineEvent } from '../model/timeline.ts';
import { deleteSteps, deprogrammedAfter, describeHistogram, formatSpread, formatTimings, histogramGrowth, parseHistogram, rolloutSteps, spreadOf, type ReleaseTimings } from './model-timings.ts';

const METRICS = `# HELP kubeproxy_network_programming_duration_seconds [ALPHA] In Cluster Network Programming Latency in seconds
# TYPE kubeproxy_network_programming_duration_seconds histogram
kubeproxy_network_programming_duration_seconds_bucket{le="0.25"} 1
kubeproxy_network_programming_duration_seconds_bucket{le="0.5"} 2
kubeproxy_network_programming_duration_seconds_bucket{le="1"} 6
kubeproxy_network_programming_duration_seconds_bucket{le="2"} 10
kubeproxy_network_programming_duration_seconds_bucket{le="+Inf"} 10
kubeproxy_network_programming_duration_seconds_sum 9.5
kubeproxy_network_programming_duration_seconds_count 10
kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",le="0.016"} 3
kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",le="+Inf"} 4
kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv6",le="0.016"} 1
kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv6",le="+Inf"} 1
kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} 0.1
kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv6"} 0.01
kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 4
kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv6"} 1
`;

describe('kube-proxy histograms', () => {
  it('reads a histogram, its series summed over every label but le', () => {
    expect(parseHistogram(METRICS, 'kubeproxy_network_programming_duration_seconds')).toEqual({
      buckets: [[0.25, 1], [0.5, 2], [1, 6], [2, 10], [Infinity, 10]],
      sum: 9.5,
      count: 10,
    });
    const sync = parseHistogram(METRICS, 'kubeproxy_sync_proxy_rules_duration_seconds');
    expect(sync?.buckets).toEqual([[0.016, 4], [Infinity, 5]]);
    expect(sync?.count).toBe(5);
    expect(sync?.sum).toBeCloseTo(0.11);
    expect(parseHistogram(METRICS, 'kubeproxy_absent')).toBeUndefined();
  });

  it('takes what grew between two scrapes, added up over nodes, and says it in shares of bucket bounds', () => {
    const before = parseHistogram(METRICS, 'kubeproxy_network_programming_duration_seconds');
    const after = parseHistogram(METRICS.replace('{le="2"} 10', '{le="2"} 14').replace('{le="+Inf"} 10', '{le="+Inf"} 14').replace('_sum 9.5', '_sum 15.5').replace('_count 10', '_count 14'), 'kubeproxy_network_programming_duration_seconds');
    const grown = histogramGrowth([{ before, after }, { before: undefined, after: before }]);
    expect(grown.count).toBe(14);
    expect(grown.buckets).toEqual([[0.25, 1], [0.5, 2], [1, 6], [2, 14], [Infinity, 14]]);
    // 3 s is no bucket bound: left out rather than guessed.
    expect(describeHistogram(grown, [0.5, 1, 2, 3])).toBe('14: 14 % within 0.5 s, 43 % within 1 s, 100 % within 2 s; mean 1.11 s');
    expect(describeHistogram({ buckets: [], sum: 0, count: 0 }, [1])).toBe('none');
  });
});

describe('spreads', () => {
  it('median, range and count, in seconds from 10 s', () => {
    expect(spreadOf([])).toBeUndefined();
    expect(spreadOf([30, 10, 20, 40])).toEqual({ n: 4, min: 10, median: 25, max: 40 });
    expect(formatSpread(spreadOf([44, 21, 149]))).toBe('median 44 ms (21-149, 3)');
    expect(formatSpread(spreadOf([12_345]))).toBe('12.3 s (1)');
    expect(formatSpread(undefined)).toBe('not seen');
  });
});

const ev = (t: number, kind: TimelineEvent['kind'], pod: string, detail?: Record<string, unknown>): TimelineEvent => ({ t, kind, pod, ...(detail ? { detail } : {}) });

describe('steps read off the watches', () => {
  it('a delete: to terminating from the API response, removal from the exit', () => {
    const events = [
      ev(90, 'endpoint-changed', 'a', { ready: true, serving: true, terminating: false }),
      ev(140, 'endpoint-changed', 'a', { ready: false, serving: true, terminating: true }),
      ev(200, 'exit', 'a', { code: 0 }),
      ev(215, 'endpoint-changed', 'a', { removed: true }),
    ];
    expect(deleteSteps(events, 'a', 100)).toEqual({ toTerminating: 40, exitToRemoval: 15 });
    // No status before the object went: the removal stands for the exit.
    expect(deleteSteps([ev(150, 'pod-removed', 'b'), ev(160, 'endpoint-changed', 'b', { removed: true })], 'b', 100)).toEqual({ exitToRemoval: 10 });
  });

  it('a rolling update of two replicas, maxSurge 1 and maxUnavailable 0', () => {
    const old = new Set(['o1', 'o2']);
    const events = [
      ev(1_000, 'pod-created', 'n1'),
      ev(2_000, 'pod-ready', 'n1'),
      ev(2_030, 'delete-issued', 'o1'),
      ev(2_040, 'pod-created', 'n2'),
      ev(2_400, 'pod-removed', 'o1'),
      ev(3_100, 'pod-ready', 'n2'),
      ev(3_120, 'delete-issued', 'o2'),
      ev(3_500, 'pod-removed', 'o2'),
    ];
    expect(rolloutSteps(events, 990, old, 2)).toEqual({
      toFirstCreated: 10,
      createdToReady: [1_000, 1_060],
      readyToOldDeleted: [30, 20],
      oldDeletedToNextCreated: [10],
      total: 2_510,
      orderViolations: 0,
    });
    // An old pod deleted before any new one was Ready is counted.
    const early = [ev(1_000, 'pod-created', 'n1'), ev(1_100, 'delete-issued', 'o1'), ev(2_000, 'pod-ready', 'n1')];
    expect(rolloutSteps(early, 990, old, 2).orderViolations).toBe(1);
    expect(rolloutSteps(early, 990, old, 2).total).toBeUndefined();
  });
});

describe('deprogramming as traffic shows it', () => {
  const samples = [
    { t: 900, ip: '10.0.0.1' },
    { t: 1010, ip: '10.0.0.2' },
    { t: 1240, ip: '10.0.0.1' },
    { t: 1180, ip: '10.0.0.1' },
    { t: 1300, ip: '10.0.0.2' },
  ];
  it('is the last new connection the deleted pod answered, opened after its delete, whatever order the answers came in', () => {
    expect(deprogrammedAfter(samples, '10.0.0.1', 1000)).toBe(240);
  });
  it('is 0 when no connection after the delete reached the pod, and undefined when the probe never reached it', () => {
    expect(deprogrammedAfter(samples, '10.0.0.1', 1250)).toBe(0);
    expect(deprogrammedAfter(samples, '10.0.0.9', 1000)).toBeUndefined();
  });
});

describe('the table', () => {
  it('one column per release beside the model', () => {
    const release = (version: string): ReleaseTimings => ({
      version,
      toTerminating: [40, 50],
      exitToRemoval: [10],
      rollouts: [{ toFirstCreated: 10, createdToReady: [1_000], readyToOldDeleted: [30], oldDeletedToNextCreated: [10], total: 2_500, orderViolations: 0 }],
      evictions: [{ refused: { status: 429, causes: ['DisruptionBudget'] }, readyToAcceptedMs: 120, retries: 3 }],
      forceDeletes: [{ objectGoneMs: 5, sigtermMs: 300 }],
      programming: { buckets: [[1, 1], [Infinity, 2]], sum: 2, count: 2 },
      sync: { buckets: [], sum: 0, count: 0 },
    });
    const lines = formatTimings([release('v1.36.3'), release('v1.37.2')]).split('\n');
    expect(lines[0]).toBe('| step | v1.36.3 | v1.37.2 | local model |');
    expect(lines.find((l) => l.includes('endpoint `terminating`'))).toContain('| median 45 ms (40-50, 2) | median 45 ms (40-50, 2) | 0 ms |');
    expect(lines.find((l) => l.includes('while the budget forbids'))).toContain('| 429 DisruptionBudget |');
    // The kill that did not come within the wait is said, not dropped.
    expect(lines.find((l) => l.includes('container killed'))).toContain('| not seen; not seen in 1 |');
  });
});
