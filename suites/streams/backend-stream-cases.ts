// What the backend stream suites check of a result, whatever stopped the backends (a delete, a
// rollout, a node drain): a drain-correct backend ended its streams the protocol's way and every
// reconnect was served; a broken one failed the stream assertion, with the cut placed where it
// happened.

import { expect } from 'vitest';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectFailedBy, expectPass } from '../helpers/run-case.ts';

export function message(r: ScenarioResult, name: string): string | undefined {
  return r.assertions.find((a) => a.name === name)?.message;
}

/** Passed, and streamsIntact says how the deleted pods closed their streams. */
export function expectClosedProperly(r: ScenarioResult, close: RegExp): void {
  expectPass(r);
  expect(message(r, 'streamsIntact'), describeResult(r)).toMatch(close);
}

/** Failed by streamsIntact, the streams cut the way `fault` says. */
export function expectCut(r: ScenarioResult, fault: RegExp): void {
  expectFailedBy(r, 'streamsIntact');
  expect(message(r, 'streamsIntact'), describeResult(r)).toMatch(fault);
}

/** Passed, each pod the scenario stopped having said GOAWAY (`pods` of them) with its clients moving on. */
export function expectGoaway(r: ScenarioResult, pods: number): void {
  expectPass(r);
  expect(message(r, 'http2Goaway'), describeResult(r)).toMatch(new RegExp(Array(pods).fill('GOAWAY from backend-.*served by backend-').join('.*')));
}

/** A backend that exits at SIGTERM: its calls and streams cut without GOAWAY. */
export function expectGrpcCut(r: ScenarioResult): void {
  expectFailedBy(r, 'grpcStreamsComplete', 'http2Goaway');
  expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/UNAVAILABLE|INTERNAL/);
}
