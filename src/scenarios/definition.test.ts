import { describe, expect, it } from 'vitest';
import { defineScenario, optionTables, pick, withoutNightly, type Feature, type Seed } from './definition.ts';
import type { Scenario } from '../model/scenario.ts';
import { optionsFor } from '../runner/run-matrix.ts';

const options = {
  replicas: { default: 3, doc: 'backend replicas' },
  graceSeconds: { default: 5, nightly: 60, doc: 'terminationGracePeriodSeconds' },
  deleteAtMs: { default: 1000, nightly: 10_000, doc: 'when the pod is deleted' },
};

const base = { id: 'x', description: 'x', features: [] as Feature[], seeds: [] as Seed[], role: 'backend' as const, build: () => ({}) as Scenario };

describe('scenario options, declared once', () => {
  it('derive the defaults, the nightly values and the docs, in declared order', () => {
    const tables = optionTables(options);
    expect(Object.entries(tables.defaults)).toEqual([['replicas', 3], ['graceSeconds', 5], ['deleteAtMs', 1000]]);
    // An option without a nightly value is absent there, not undefined: nightly runs keep its default.
    expect(tables.nightly).toStrictEqual({ graceSeconds: 60, deleteAtMs: 10_000 });
    expect(tables.optionDocs).toEqual({ replicas: 'backend replicas', graceSeconds: 'terminationGracePeriodSeconds', deleteAtMs: 'when the pod is deleted' });
  });

  it('reach the definition the rest of zerodrop reads', () => {
    const def = defineScenario({ ...base, options });
    expect(def.defaults).toEqual({ replicas: 3, graceSeconds: 5, deleteAtMs: 1000 });
    expect(def.nightly).toEqual({ graceSeconds: 60, deleteAtMs: 10_000 });
    expect('options' in def).toBe(false);
  });

  it('pick keeps the order asked for; withoutNightly drops the nightly values only', () => {
    expect(Object.keys(pick(options, ['deleteAtMs', 'replicas']))).toEqual(['deleteAtMs', 'replicas']);
    expect(optionTables(withoutNightly(options)).nightly).toStrictEqual({});
    expect(optionTables(withoutNightly(options)).defaults).toEqual(optionTables(options).defaults);
  });

  it('take their cluster values only where the Service balancer picks pods at random; nightly values and --set win over them', () => {
    const def = defineScenario({ ...base, options: { ...options, streams: { default: 4, cluster: 12, nightly: 50, doc: 'streams' }, channels: { default: 4, cluster: 12, doc: 'channels' } } });
    expect(def.cluster).toStrictEqual({ streams: 12, channels: 12 });
    expect(defineScenario({ ...base, options }).cluster).toBeUndefined();
    expect(optionsFor(def, {}, false)).toMatchObject({ streams: 4, channels: 4 });
    expect(optionsFor(def, {}, false, { randomBalancer: true })).toMatchObject({ streams: 12, channels: 12, replicas: 3 });
    expect(optionsFor(def, {}, true, { randomBalancer: true })).toMatchObject({ streams: 50, channels: 12, graceSeconds: 60 });
    expect(optionsFor(def, { channels: 2 }, false, { randomBalancer: true })).toMatchObject({ streams: 12, channels: 2 });
    // withoutNightly keeps them: a scenario without a nightly form still runs on clusters.
    expect(optionTables(withoutNightly({ streams: { default: 4, cluster: 12, nightly: 50, doc: 'streams' } })).cluster).toStrictEqual({ streams: 12 });
  });

  it('refuse, at compile time, a declaration without its doc, a value that is no number, a misspelt field', () => {
    // @ts-expect-error: no doc
    defineScenario({ ...base, options: { replicas: { default: 3 } } });
    // @ts-expect-error: a string default
    defineScenario({ ...base, options: { replicas: { default: '3', doc: 'backend replicas' } } });
    // @ts-expect-error: `nighlty` is no field of an option
    defineScenario({ ...base, options: { replicas: { default: 3, nighlty: 5, doc: 'backend replicas' } } });
    defineScenario({ ...base, options: { replicas: { default: 3, doc: 'backend replicas' } }, checkOptions: (o) => (o.replicas > 0 ? undefined : 'no replicas') });
  });
});
