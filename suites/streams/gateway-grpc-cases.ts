// What the gateway gRPC suites check of a result, whatever stopped the gateway pods (a delete, a
// rollout, a scale-down): a drain-correct gateway carried every call and stream to its end through
// itself and said GOAWAY; a broken one cut the streams it carried, the cut placed on it.

import { expect } from 'vitest';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectFailedBy, expectPass } from '../helpers/run-case.ts';
import { message } from './backend-stream-cases.ts';

/** Every call and stream went through a gateway pod to a backend, each named; the streams on the stopped pods ran to their end. */
export function expectCarried(r: ScenarioResult): void {
  expectPass(r);
  expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/streams? (was|were) open on gateway-\d+(, gateway-\d+)* when (it was|they were) deleted \(([1-9]\d*) ran to their end\); no stream was ended early/);
  expect(message(r, 'http2Goaway'), describeResult(r)).toMatch(/GOAWAY from gateway-\d+ .* served by gateway-/);
  for (const s of r.timeline?.streams ?? []) {
    // A stream the load's own end cancelled before its response came names no pod.
    if (s.ending === 'stopped' && s.sent === 0) continue;
    expect(s.gateway, `stream ${s.stream} names no gateway pod`).toMatch(/^gateway-\d+$/);
    expect(s.pod, `stream ${s.stream} names no backend pod`).toMatch(/^backend-\d+$/);
  }
}

/** The gateway's stop cut the streams it carried: placed on it, at or after its stop signal. */
export function expectCut(r: ScenarioResult): void {
  expectFailedBy(r, 'grpcStreamsComplete');
  expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/first: stream \d+ (through gateway-\d+ \(backend backend-\d+\)|on gateway-\d+) ended UNAVAILABLE .* phase "after (SIGTERM|exit) of gateway-\d+/);
}
