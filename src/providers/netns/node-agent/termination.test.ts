import { describe, expect, it } from 'vitest';

import { ContainerTermination } from './termination.ts';
import { FakeClock } from '../../../../test-support/fake-clock.ts';

function setup(hasPreStop: boolean) {
  const clock = new FakeClock();
  const log: string[] = [];
  const term = new ContainerTermination(
    clock,
    {
      runPreStop: (ms) => log.push(`prestop@${clock.t}(${ms})`),
      preStopTimedOut: () => log.push(`prestop-timeout@${clock.t}`),
      stopSignal: () => log.push(`stop@${clock.t}`),
      kill: () => log.push(`kill@${clock.t}`),
    },
    hasPreStop,
  );
  return { clock, log, term };
}

describe('ContainerTermination', () => {
  it('without preStop: stop signal at once, SIGKILL when G runs out', () => {
    const { clock, log, term } = setup(false);
    term.terminate(30);
    clock.advance(40_000);
    expect(log).toEqual(['stop@0', 'kill@30000']);
  });

  it('a preStop that ends in time: stop signal then, SIGKILL at G', () => {
    const { clock, log, term } = setup(true);
    term.terminate(30);
    clock.advance(5_000);
    term.preStopDone();
    clock.advance(40_000);
    expect(log).toEqual(['prestop@0(30000)', 'stop@5000', 'kill@30000']);
  });

  it('a preStop that overruns G: stop signal at G and a 2 s extension', () => {
    const { clock, log, term } = setup(true);
    term.terminate(10);
    clock.advance(20_000);
    expect(log).toEqual(['prestop@0(10000)', 'prestop-timeout@10000', 'stop@10000', 'kill@12000']);
  });

  it('never less than 2 s between the stop signal and SIGKILL', () => {
    const { clock, log, term } = setup(true);
    term.terminate(10);
    clock.advance(9_500);
    term.preStopDone();
    clock.advance(10_000);
    expect(log).toEqual(['prestop@0(10000)', 'stop@9500', 'kill@11500']);
  });

  it('G below 1 s is the pod worker minimum of 1 s; a force delete: preStop ≤ 1 s, stop, SIGKILL 2 s later', () => {
    const { clock, log, term } = setup(true);
    term.terminate(0);
    clock.advance(10_000);
    expect(log).toEqual(['prestop@0(1000)', 'prestop-timeout@1000', 'stop@1000', 'kill@3000']);
  });

  it('a second delete shortens G, never lengthens it', () => {
    const { clock, log, term } = setup(false);
    term.terminate(30);
    clock.advance(1_000);
    term.terminate(60);
    term.terminate(5);
    clock.advance(60_000);
    expect(log).toEqual(['stop@0', 'kill@6000']);
  });

  it('a second delete during preStop cuts the hook at the new deadline', () => {
    const { clock, log, term } = setup(true);
    term.terminate(30);
    clock.advance(2_000);
    term.terminate(0); // a shorter delete: 1 s from now
    clock.advance(10_000);
    expect(log).toEqual(['prestop@0(30000)', 'prestop-timeout@3000', 'stop@3000', 'kill@5000']);
  });

  it('an exit ends it: no SIGKILL', () => {
    const { clock, log, term } = setup(false);
    term.terminate(30);
    clock.advance(1_000);
    term.exited();
    clock.advance(60_000);
    expect(log).toEqual(['stop@0']);
  });
});
