import { describe, expect, it } from 'vitest';
import type { Expectation } from '../model/scenario.ts';
import { evaluate, resolvePods } from './index.ts';
import { drainScenario, TimelineBuilder } from '../../test-support/assert.ts';

describe('resolvePods', () => {
  it('resolves a step to the pod it deleted', () => {
    expect(resolvePods({ step: 'delete' }, drainScenario('correct').build())).toEqual(['backend-2']);
    expect(resolvePods({ step: 'other' }, drainScenario('correct').build())).toEqual([]);
  });

  it('resolves a workload to every pod of it that was deleted, by its other events when delete-issued lacks it', () => {
    const b = drainScenario('correct');
    b.drain('backend-3', { at: 1500 });
    b.pod('gw-1', { workload: 'gateway' }).event(1600, 'delete-issued', { pod: 'gw-1' });
    const tl = b.build();
    expect(resolvePods({ workload: 'backend' }, tl)).toEqual(['backend-2', 'backend-3']);
    expect(resolvePods({ workload: 'gateway' }, tl)).toEqual(['gw-1']);
  });

  it('resolves a scale or rollout step to the pods of its workload deleted after it', () => {
    const b = new TimelineBuilder().pod('a-1', { workload: 'a' }).pod('a-2', { workload: 'a' }).pod('b-1', { workload: 'b' });
    b.event(100, 'delete-issued', { pod: 'a-1', workload: 'a' });
    b.event(500, 'chaos', { workload: 'a', detail: { step: 'scale-down', action: 'scale' } });
    b.event(510, 'delete-issued', { pod: 'a-2', workload: 'a' });
    b.event(520, 'delete-issued', { pod: 'b-1', workload: 'b' });
    expect(resolvePods({ step: 'scale-down' }, b.build())).toEqual(['a-2']);
  });
});

describe('evaluate', () => {
  const all: Expectation[] = [
    { assert: 'noFailedRequests' },
    { assert: 'podExitWithin', pod: { step: 'delete' }, from: 'delete', minMs: 500, maxMs: 5000 },
    { assert: 'exitsPromptlyWhenIdle', pod: { step: 'delete' }, withinMs: 600 },
    { assert: 'noNewConnectionsAfterDeprogram', pod: { step: 'delete' } },
    { assert: 'completesInFlight', load: 'http' },
    { assert: 'notKilled', pod: { step: 'delete' } },
  ];

  it('evaluates every expectation in order and passes a correct drain', () => {
    const results = evaluate(all, drainScenario('correct').build());
    expect(results.map((r) => r.name)).toEqual(all.map((e) => e.assert));
    expect(results.map((r) => r.verdict)).toEqual(Array(all.length).fill('pass'));
  });

  it.each([
    ['exit-on-sigterm', ['noFailedRequests', 'podExitWithin', 'completesInFlight']],
    ['refuse-after-sigterm', ['noFailedRequests']],
    ['hang-until-killed', ['podExitWithin', 'exitsPromptlyWhenIdle', 'notKilled']],
    ['force-delete', ['noFailedRequests', 'podExitWithin', 'exitsPromptlyWhenIdle', 'completesInFlight', 'notKilled']],
    ['connect-after-deprogram', ['noNewConnectionsAfterDeprogram']],
  ] as const)('catches the %s mutant by %j', (mode, failing) => {
    const results = evaluate(all, drainScenario(mode).build());
    expect(results.filter((r) => r.verdict === 'fail').map((r) => r.name)).toEqual(failing);
  });

  it('does not modify the timeline it is given', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    const before = JSON.stringify(tl);
    evaluate(all, tl);
    expect(JSON.stringify(tl)).toBe(before);
    expect(tl.requests.some((r) => r.outcome === 'refused')).toBe(false);
  });

  it('turns an assertion that throws into inconclusive', () => {
    const bogus = { assert: 'noSuchThing' } as unknown as Expectation;
    const [result] = evaluate([bogus], drainScenario('correct').build());
    expect(result).toMatchObject({ name: 'noSuchThing', verdict: 'inconclusive' });
    expect(result?.message).toMatch(/^could not be evaluated: unknown assertion/);
  });
});
