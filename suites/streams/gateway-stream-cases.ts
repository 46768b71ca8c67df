// What the gateway stream suites check of a result: a drain-correct gateway carried every stream to
// its end, each named by the gateway pod it went through and the backend behind it; a broken one
// failed streamsIntact with the cut placed on the deleted gateway pod's shutdown. The first stream to
// break may be one the dying gateway reset before it reached any backend: then it is placed on the
// gateway alone ("on gateway-1"), which is as right as "through gateway-1 (backend backend-2)".

import { describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

export function streamsIntactMessage(r: ScenarioResult): string | undefined {
  return r.assertions.find((a) => a.name === 'streamsIntact')?.message;
}

/**
 * `stopped` gateway pods were stopped (one deleted, two retired by a rollout or a scale-down), and
 * each of them carried streams when its delete came: every drain the scenario speaks of was tested,
 * not only the first.
 */
export function expectCarried(r: ScenarioResult, stopped = 1): void {
  expectPass(r);
  const intact = r.assertions.find((a) => a.name === 'streamsIntact');
  expect(intact?.message, describeResult(r)).toMatch(/streams were open on a deleted pod .*: each ran to its end/);
  const streams = r.timeline?.streams ?? [];
  const deleted = Object.entries((intact?.details?.['deletedPods'] ?? {}) as Record<string, number>);
  expect(deleted.map(([pod]) => pod), describeResult(r)).toHaveLength(stopped);
  for (const [pod, t] of deleted) {
    expect(streams.filter((s) => s.gateway === pod && s.start <= t && s.end >= t).length, `no stream was open on ${pod} at its delete`).toBeGreaterThan(0);
  }
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

/** A naive twin the scenario must catch: its system (skipped when not on PATH), and the fault it leaves on the streams. */
export interface NaiveCase {
  system: string;
  profile: string;
  fault: RegExp;
  /** What its stop does to the streams, for the test's name. */
  how: string;
}

/**
 * The CI cases of a gateway stream scenario whose disruption stops `stopped` gateway pods: the
 * reference gateway and nginx carry every stream on each of them to its end, and `naive` cuts them.
 * One naive twin a scenario, since CI time is scarce; the others are measured by hand (docs/scenarios.md).
 * `overrides` may bring the disruption forward to the moment the first streams have all started (its
 * `...AtMs` at 0): streams are then already ending and being replaced, which is all the wait is for.
 */
export function describeStreamCases(scenario: string, stopped: number, naive: NaiveCase, overrides: OptionValues = {}): void {
  describe(scenario, () => {
    it(`passes against the reference gateway: each of the ${stopped} pods stopped keeps its streams to their ends`, async () => {
      expectCarried(await runCase(scenario, 'reference', overrides), stopped);
    });

    describe.skipIf(!onPath('nginx'))('nginx', () => {
      it("nginx (drain-correct) passes: each stopped pod's graceful shutdown keeps its streams until they end", async () => {
        expectCarried(await runCase(scenario, 'nginx', overrides), stopped);
      });
    });

    describe.skipIf(!onPath(naive.system))(naive.system, () => {
      it(`${naive.profile} fails: ${naive.how}`, async () => {
        expectCutOnGateway(await runCase(scenario, naive.profile, overrides), naive.fault);
      });
    });
  });
}
