import { describe, expect, it } from 'vitest';
import { catalog } from '../scenarios/index.ts';
import { describeScenario } from './list.ts';

const described = (id: string): string => {
  const lines: string[] = [];
  describeScenario(catalog.find((d) => d.id === id)!, (l) => lines.push(l));
  return lines.join('\n');
};

describe('zerodrop list --scenario ID', () => {
  it('gives every option its default, nightly value, meaning and range', () => {
    const text = described('gateway-delete-turn');
    expect(text).toMatch(/\n {2}graceSeconds +4 \(nightly 300\)\n +terminationGracePeriodSeconds of the gateway pods; a whole number of seconds from 0 to 3600\n/);
    // A nightly value equal to the default is not repeated.
    expect(text).toMatch(/\n {2}ratePerFlow +50\n/);
    for (const key of Object.keys(catalog.find((d) => d.id === 'gateway-delete-turn')!.defaults)) expect(text).toMatch(new RegExp(`\\n {2}${key} `));
  });

  it('names the profiles that play it with the verdict each must have, and why where the scenario says', () => {
    const text = described('backend-idle-exit');
    expect(text).toMatch(/\n {2}reference +pass\n/);
    expect(text).toMatch(/\n {2}mutant-hang-until-killed +fail\n/);
    expect(text).toMatch(/\n {2}mutant-exit-on-sigterm +pass: an idle pod has nothing to drain/);
    // A gateway profile cannot play a backend scenario: not listed.
    expect(text).not.toMatch(/\n {2}nginx /);
    expect(described('gateway-delete-http')).toMatch(/\n {2}nginx-without-keepalive_time +fail\n/);
  });
});
