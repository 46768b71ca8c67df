// Shared checks of the gateway suites: a drain-correct gateway passes every HTTP gateway scenario
// with each request attributed to a gateway pod and a backend pod; its naive twin fails, and the
// report names the phase and the gateway pod of the failed requests.

import { expect } from 'vitest';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectPass } from '../helpers/run-case.ts';

/** Every HTTP/1.1 gateway scenario of the catalog. */
export const HTTP_GATEWAY_SCENARIOS = [
  'gateway-delete-http',
  'gateway-delete-http-no-keepalive',
  'gateway-rollout-http',
  'gateway-scale-down',
  'gateway-slow-lb',
] as const;

/** Passed, and every request went through a gateway pod to a backend pod, both named. */
export function expectDrainCorrect(r: ScenarioResult): void {
  expectPass(r);
  const requests = r.timeline?.requests ?? [];
  expect(requests.length, describeResult(r)).toBeGreaterThan(50);
  // Overlong requests outlast the drain by design: cut at the drain timeout, no pod answers them.
  for (const q of requests.filter((r) => !r.load.startsWith('overlong-'))) {
    expect(q.gateway, `request ${q.id} names no gateway pod`).toMatch(/^gateway-\d+$/);
    expect(q.pod).toBe(q.gateway);
    expect(q.backendPod, `request ${q.id} names no backend pod`).toMatch(/^backend-\d+$/);
  }
  // The deleted gateway pods' connections went to zero on the Timeline before they exited.
  const samples = (r.timeline?.activeConnections ?? []).filter((s) => s.service === 'gateway');
  expect(samples.length).toBeGreaterThan(0);
  const deleted = new Set((r.timeline?.events ?? []).filter((e) => e.kind === 'delete-issued' && e.workload === 'gateway').map((e) => e.pod));
  for (const pod of deleted) {
    const last = samples.filter((s) => pod !== undefined && pod in s.active).at(-1);
    expect(last?.active[pod ?? ''], `active connections of ${pod}`).toBe(0);
  }
}

/**
 * Failed by noFailedRequests, with the first failure's phase told against a gateway pod's shutdown
 * while traffic still reached it: "after SIGTERM of gateway-1, before load balancer deprogrammed",
 * or, for a lagging node's request, "..., sent straight to the pod (a node not yet deprogrammed)".
 */
export function expectNaiveFailure(r: ScenarioResult): void {
  expect(r.verdict, describeResult(r)).toBe('fail');
  const failed = r.assertions.find((a) => a.name === 'noFailedRequests');
  expect(failed?.verdict, describeResult(r)).toBe('fail');
  expect(failed?.message).toMatch(/first at t=\d+\.\d{3} s on gateway-\d+, phase "(after SIGTERM|after exit) of gateway-\d+, (before load balancer deprogrammed|sent straight to the pod \(a node not yet deprogrammed\))"/);
  const rows = (failed?.details?.['firstFailures'] ?? []) as { pod?: string; phase: string }[];
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.phase).toMatch(/gateway-\d+/);
}
