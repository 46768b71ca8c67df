import { describe, expect, it } from 'vitest';
import { TimelineBuilder } from '../../test-support/assert.ts';
import { harnessResponsive, loadHeld } from './validity.ts';

describe('loadHeld', () => {
  it('passes a load that held its rate with no late starts', () => {
    expect(loadHeld([{ load: 'http', targetRate: 200, achievedRate: 199.6, late: 0 }])).toMatchObject({
      name: 'loadHeld',
      verdict: 'pass',
      message: 'load "http" held 199.6/s, 99.8% of the 200/s it must hold, with no late starts',
    });
    expect(loadHeld([{ load: 'long', late: 0 }]).verdict).toBe('pass');
  });

  it('is inconclusive below 95% of the target', () => {
    expect(loadHeld([{ load: 'http', targetRate: 200, achievedRate: 180, late: 0 }])).toMatchObject({
      verdict: 'inconclusive',
      message: 'load "http" achieved 180.0/s, 90.0% of the 200/s it must hold, below 95%',
    });
    expect(loadHeld([{ load: 'http', targetRate: 200, achievedRate: 190, late: 0 }]).verdict).toBe('pass');
  });

  it('is inconclusive with late starts, naming the load', () => {
    const r = loadHeld([
      { load: 'a', targetRate: 10, achievedRate: 10, late: 0 },
      { load: 'b', targetRate: 10, achievedRate: 10, late: 3 },
    ]);
    expect(r).toMatchObject({ verdict: 'inconclusive', message: 'load "b" had 3 late starts' });
  });
});

describe('harnessResponsive', () => {
  it('passes when the event loop stayed under the limit', () => {
    const tl = new TimelineBuilder().harness(1000, 12).harness(2000, 40).build();
    expect(harnessResponsive(tl)).toMatchObject({
      verdict: 'pass',
      message: 'the harness event loop lagged at most 40 ms (limit 100 ms, 2 samples)',
    });
  });

  it('is inconclusive with the worst lag and when', () => {
    const tl = new TimelineBuilder().harness(1000, 12).harness(2500, 245).harness(3000, 130).build();
    expect(harnessResponsive(tl)).toMatchObject({
      verdict: 'inconclusive',
      message: 'the harness event loop lagged 245 ms at t=2.500 s (limit 100 ms; 2 samples of 3 over): measurements are not trustworthy',
    });
    expect(harnessResponsive(tl, { maxLoopDelayMs: 300 }).verdict).toBe('pass');
  });
});
