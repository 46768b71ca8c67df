// The gateway stream scenarios as gateway-streams.ts builds them: one load and one judgement, the
// disruption the only difference, its every stopped pod held to the streams and the drain bounds.

import { describe, expect, it } from 'vitest';
import { findProfile } from '../profiles/index.ts';
import { findScenario } from './index.ts';

const nginx = findProfile('nginx')!;
const build = (id: string, set: Record<string, number> = {}) => {
  const def = findScenario(id)!;
  return def.build(nginx, { ...def.defaults, ...set });
};

describe('gateway stream scenarios', () => {
  it.each([
    ['gateway-delete-websocket', 'delete-pod', { podGone: { step: 'delete' }, settleMs: 500 }, { step: 'delete' }],
    ['gateway-delete-sse', 'delete-pod', { podGone: { step: 'delete' }, settleMs: 500 }, { step: 'delete' }],
    ['gateway-rollout-websocket', 'rollout-restart', { rolloutComplete: 'gateway', settleMs: 500 }, { workload: 'gateway' }],
    ['gateway-rollout-sse', 'rollout-restart', { rolloutComplete: 'gateway', settleMs: 500 }, { workload: 'gateway' }],
    ['gateway-scale-down-websocket', 'scale', { podGone: { step: 'scale-down' }, settleMs: 500 }, { step: 'scale-down' }],
    ['gateway-scale-down-sse', 'scale', { podGone: { step: 'scale-down' }, settleMs: 500 }, { step: 'scale-down' }],
  ] as const)('%s: bounded streams, the disruption one stream length plus 1 s in, every pod it stops judged to the streams\' ends', (id, action, end, pod) => {
    const s = build(id);
    const streamMs = build(id, { streamMs: 2000 });
    expect(s.loads).toHaveLength(1);
    expect(streamMs.loads[0]!.spec).toMatchObject({ streams: 8, ratePerStream: 20, reopen: false, messagesPerStream: 40 });
    expect(streamMs.steps).toHaveLength(1);
    expect(streamMs.steps[0]).toMatchObject({ when: { atMs: 3000 }, action: { kind: action } });
    expect(s.end).toEqual(end);
    expect(s.expectations).toContainEqual({ assert: 'streamsIntact', load: 'streams', pod, toEnd: true });
    for (const assert of ['drainTiming', 'preStopOutlastsDeprogramming', 'notKilled']) {
      expect(s.expectations.find((e) => e.assert === assert), `${id} ${assert}`).toMatchObject({ pod });
    }
  });

  it("a rollout is held to gateway-rollout-http's bound; a scale-down leaves one of three, as gateway-scale-down does", () => {
    const bound = (id: string) => build(id).expectations.find((e) => e.assert === 'rolloutCompletesWithin');
    expect(bound('gateway-rollout-websocket')).toEqual(bound('gateway-rollout-http'));
    expect(bound('gateway-rollout-sse')).toEqual(bound('gateway-rollout-http'));
    expect(build('gateway-scale-down-sse').steps[0]!.action).toEqual({ kind: 'scale', workload: 'gateway', replicas: 1 });
    expect(build('gateway-scale-down-sse').topology.workloads.find((w) => w.name === 'gateway')?.replicas).toBe(3);
    expect(findScenario('gateway-scale-down-websocket')!.checkOptions?.({ ...findScenario('gateway-scale-down-websocket')!.defaults, replicasAfter: 3 })).toMatch(/nothing is scaled down/);
  });

  it('the WebSocket ones declare Caddy 2.6 a known failure; the event stream ones do not', () => {
    for (const id of ['gateway-delete-websocket', 'gateway-rollout-websocket', 'gateway-scale-down-websocket']) expect(findScenario(id)!.knownFailures?.['caddy'], id).toMatch(/Caddy 2\.6 closes every proxied WebSocket with 1001/);
    for (const id of ['gateway-delete-sse', 'gateway-rollout-sse', 'gateway-scale-down-sse']) expect(findScenario(id)!.knownFailures, id).toBeUndefined();
  });
});
