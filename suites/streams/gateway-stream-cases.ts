// What the gateway stream suites check of a result: a drain-correct gateway carried every stream to
// its end, each named by the gateway pod it went through and the backend behind it; a broken one
// failed streamsIntact with the cut placed on the deleted gateway pod's shutdown. The first stream to
// break may be one the dying gateway reset before it reached any backend: then it is placed on the
// gateway alone ("on gateway-1"), which is as right as "through gateway-1 (backend backend-2)".

import { expect } from 'vitest';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectFailedBy, expectPass } from '../helpers/run-case.ts';

export function streamsIntactMessage(r: ScenarioResult): string | undefined {
  return r.assertions.find((a) => a.name === 'streamsIntact')?.message;
}

export function expectCarried(r: ScenarioResult): void {
  expectPass(r);
  expect(streamsIntactMessage(r), describeResult(r)).toMatch(/streams were open on a deleted pod .*: each ran to its end/);
  const streams = r.timeline?.streams ?? [];
  expect(streams.length, describeResult(r)).toBeGreaterThan(8);
  for (const s of streams) {
    // A stream the load's own end stopped before its response came has no pod to name; that is the
    // only stream allowed to name none.
    if (s.ending === 'stopped' && s.echoed === 0 && s.gateway === undefined && s.pod === undefined) continue;
    expect(s.gateway, `stream ${s.stream} names no gateway pod`).toMatch(/^gateway-\d+$/);
    expect(s.pod, `stream ${s.stream} names no backend pod`).toMatch(/^backend-\d+$/);
  }
}

export function expectCutOnGateway(r: ScenarioResult, fault: RegExp): void {
  expectFailedBy(r, 'streamsIntact');
  expect(streamsIntactMessage(r), describeResult(r)).toMatch(fault);
  expect(streamsIntactMessage(r), describeResult(r)).toMatch(/first: stream \d+ (through gateway-\d+ \(backend backend-\d+\)|on gateway-\d+) .* phase "after (SIGTERM|exit) of gateway-\d+/);
}
