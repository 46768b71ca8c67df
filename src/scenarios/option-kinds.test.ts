import { describe, expect, it } from 'vitest';
import { catalog } from './index.ts';
import { describeKind, OPTION_KINDS, optionProblem } from './option-kinds.ts';
import { optionsFor } from '../runner/run-matrix.ts';

describe('scenario option kinds', () => {
  it('cover every option of every scenario, and no option that none has', () => {
    const used = new Set(catalog.flatMap((s) => Object.keys(s.defaults)));
    expect([...used].filter((key) => OPTION_KINDS[key] === undefined)).toEqual([]);
    expect(Object.keys(OPTION_KINDS).filter((key) => !used.has(key))).toEqual([]);
  });

  it.each(catalog.map((s) => [s.id, s] as const))('%s: defaults and nightly values pass their own constraints', (_id, s) => {
    const problems = [
      ...Object.entries(s.defaults).map(([k, v]) => optionProblem(k, v)),
      ...Object.entries(s.nightly).map(([k, v]) => (v === undefined ? undefined : optionProblem(k, v))),
    ].filter((p) => p !== undefined);
    expect(problems).toEqual([]);
    expect(Object.keys(s.nightly).filter((k) => !(k in s.defaults))).toEqual([]);
    // And the constraints between options, as they run by default and nightly.
    expect(s.checkOptions?.(optionsFor(s, {}, false))).toBeUndefined();
    expect(s.checkOptions?.(optionsFor(s, {}, true))).toBeUndefined();
  });

  it.each([
    ['replicas', 2.5, 'replicas must be a whole number from 1 to 20'],
    ['replicas', 0, 'replicas must be a whole number from 1 to 20'],
    ['replicas', 21, 'replicas must be a whole number from 1 to 20'],
    ['graceSeconds', 0.1, 'graceSeconds must be a whole number of seconds from 0 to 3600'],
    ['rate', 0, 'rate must be a number per second greater than 0 and at most 100000'],
    ['deleteAtMs', -1, 'deleteAtMs must be a whole number of milliseconds from 0 to 3600000'],
    ['flowMs', Number.POSITIVE_INFINITY, 'flowMs must be a whole number of milliseconds from 1 to 3600000'],
    ['preStopSeconds', Number.NaN, 'preStopSeconds must be a number of seconds from 0 to 3600'],
  ])('%s=%d is refused: %s', (key, value, message) => {
    expect(optionProblem(key, value)).toBe(message);
  });

  it.each([
    ['replicas', 1],
    ['replicasAfter', 0],
    ['graceSeconds', 0],
    ['preStopSeconds', 1.5],
    ['rate', 0.5],
    ['settleMs', 0],
  ])('%s=%d is allowed', (key, value) => {
    expect(optionProblem(key, value)).toBeUndefined();
  });

  it('describes a kind the way the messages do', () => {
    expect(describeKind({ integer: true, min: 1, max: 20 })).toBe('a whole number from 1 to 20');
  });
});
