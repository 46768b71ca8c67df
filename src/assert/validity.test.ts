import { describe, expect, it } from 'vitest';
import { TimelineBuilder } from '../../test-support/assert.ts';
import { harnessResponsive, loadHeld, slowConnects } from './validity.ts';
import { RequestTable } from '../model/request-table.ts';
import type { HarnessSample, RequestRecord } from '../model/timeline.ts';

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

  it('counts the connects of a load that took the 1 s SYN retransmission, and says so beside a rate not held', () => {
    // start: the request began (its connect first); connectionStart: the socket connected.
    const req = (id: number, load: string, start: number, connectedAfter: number | undefined, newConnection = true): RequestRecord => ({
      id,
      load,
      start,
      end: start + (connectedAfter ?? 0) + 1,
      outcome: 'ok',
      newConnection,
      ...(connectedAfter === undefined ? {} : { connectionStart: start + connectedAfter }),
    });
    const slow = slowConnects(
      RequestTable.from([
        req(1, 'fresh', 0, 1031),
        req(2, 'fresh', 10, 2),
        req(3, 'fresh', 20, 999),
        req(4, 'http', 30, 1000),
        // Reused connections and connects that never completed say nothing of a connect's time.
        req(5, 'http', 40, 5000, false),
        req(6, 'http', 50, undefined),
      ]),
    );
    expect([...slow]).toEqual([
      ['fresh', 1],
      ['http', 1],
    ]);
    const r = loadHeld(
      [
        { load: 'fresh', targetRate: 1000, achievedRate: 423.5, late: 0 },
        { load: 'http', targetRate: 5000, achievedRate: 4990, late: 0 },
      ],
      { slowConnects: slow },
    );
    expect(r.verdict).toBe('inconclusive');
    expect(r.message).toBe(
      "load \"fresh\" achieved 423.5/s, 42.4% of the 1000/s it must hold, below 95% (1 of its connections took 1 s or more to open: a SYN or its answer was dropped and the client's kernel waited to send it again: a wait in the system or on its path)",
    );
    expect(r.details?.['loads']).toMatchObject([{ load: 'fresh', slowConnects: 1 }, { load: 'http', slowConnects: 1 }]);
    // A load that held its rate is not explained, whatever its connects took.
    expect(loadHeld([{ load: 'http', targetRate: 5000, achievedRate: 4990, late: 0 }], { slowConnects: slow }).message).not.toContain('to open');
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

  it('says what the harness did while its loop lagged', () => {
    const lagged = (spent: Pick<HarnessSample, 'windowMs' | 'cpuMs' | 'gcMs' | 'waitMs' | 'stealMs' | 'longestCall'>) =>
      harnessResponsive(new TimelineBuilder().harness(1000, 12).harness(2000, 130, spent).build()).message;
    expect(lagged({ windowMs: 230, cpuMs: 150, gcMs: 110 })).toBe(
      'the harness event loop lagged 130 ms at t=2.000 s (limit 100 ms; 1 sample of 2 over); the harness used 150 ms of CPU in that 230 ms window, 110 ms of it garbage collection: mostly its own garbage collection: measurements are not trustworthy',
    );
    expect(lagged({ windowMs: 230, cpuMs: 190, gcMs: 5, waitMs: 3, stealMs: 0 })).toContain('5 ms of it garbage collection, its main thread waited 3 ms for a core, the hypervisor took 0 ms of the machine\'s CPU: busy with its own work');
    // Less CPU than the lag: the loop cannot have been busy all that time. Where it was, Linux says.
    expect(lagged({ windowMs: 230, cpuMs: 30, gcMs: 0 })).toContain('off the CPU for at least 100 ms of the lag (the cores busy with other processes, or a blocking call)');
    expect(lagged({ windowMs: 230, cpuMs: 30, gcMs: 0, waitMs: 2, stealMs: 0 })).toContain('off the CPU for at least 100 ms of the lag without waiting for a core: blocked (a blocking call)');
    // The process's CPU counts every thread: the main thread's wait for a core decides.
    expect(lagged({ windowMs: 255, cpuMs: 78, gcMs: 6, waitMs: 165, stealMs: 20 })).toContain('its main thread waited 165 ms for a core, the hypervisor took 20 ms of the machine\'s CPU: runnable but off the CPU, waiting for a core (other processes, or the kernel, held them)');
    expect(lagged({ windowMs: 230, cpuMs: 30, gcMs: 0, waitMs: 110, stealMs: 120 })).toContain(': off the CPU: the hypervisor ran something else on this machine\'s CPUs');
    // A call the harness timed held the thread for at least half the lag: it is named.
    const starting = 'starting nginx (spawn returns once the new process has exec\'d)';
    expect(lagged({ windowMs: 230, cpuMs: 8, gcMs: 0, waitMs: 2, stealMs: 0, longestCall: { what: starting, ms: 121 } })).toContain(
      'its main thread waited 2 ms for a core, the hypervisor took 0 ms of the machine\'s CPU: blocked 121 ms in one call: starting nginx',
    );
    // A shorter one is not the cause, and a wait for a core still comes first.
    expect(lagged({ windowMs: 230, cpuMs: 8, gcMs: 0, waitMs: 2, stealMs: 0, longestCall: { what: starting, ms: 40 } })).toContain('without waiting for a core: blocked (a blocking call)');
    expect(lagged({ windowMs: 230, cpuMs: 8, gcMs: 0, waitMs: 120, stealMs: 0, longestCall: { what: starting, ms: 70 } })).toContain('waiting for a core');
  });
});
