import { describe, expect, it } from 'vitest';
import type { HttpLoadSpec, UdpLoadSpec } from '../model/load.ts';
import type { Scenario } from '../model/scenario.ts';
import { driverMisfit, missingDriver, plannedLoadMs, scenarioMisfits } from './drivers.ts';

const paced: HttpLoadSpec = { kind: 'http', service: 'gateway', path: '/', keepAlive: true, mode: 'closed', connections: 10, ratePerWorker: 10, timeoutMs: 5_000 };
const udp: UdpLoadSpec = { kind: 'udp', service: 'backend', port: 'udp', flows: 2, ratePerFlow: 200, durationMs: 2000, payloadBytes: 64, replyTimeoutMs: 1000 };

describe('driverMisfit', () => {
  it('lets the built-in generators carry out anything', () => {
    expect(driverMisfit('builtin', udp)).toBeUndefined();
  });

  it("gives hey a think time's rate as its -q", () => {
    const thinking = { kind: 'http', service: 'gateway', path: '/', keepAlive: true, mode: 'closed', connections: 60, thinkMs: 200, timeoutMs: 5000 } as const;
    expect(driverMisfit('hey', thinking)).toBeUndefined();
    expect(driverMisfit('hey', { ...thinking, thinkMs: 300 })).toMatch(/hey's -q is a whole number .* needs 3\.33/);
  });

  it('lets the single requests of a scenario run beside hey (built-in), not beside iperf3', () => {
    const single = { kind: 'single', service: 'gateway', path: '/delay?ms=5000', timeoutMs: 10_000 } as const;
    expect(driverMisfit('hey', single)).toBeUndefined();
    expect(driverMisfit('iperf3', single)).toMatch(/iperf3 drives UDP packet loads, not a single load/);
  });

  it('lets hey carry out paced HTTP/1.1 loads only', () => {
    expect(driverMisfit('hey', paced)).toBeUndefined();
    expect(driverMisfit('hey', { ...paced, mode: 'open', rate: 100 })).toBeUndefined();
    expect(driverMisfit('hey', { ...paced, ratePerWorker: undefined })).toMatch(/paced load/);
    expect(driverMisfit('hey', { ...paced, mode: 'open', rate: 15 })).toMatch(/whole number.*1\.5/);
    expect(driverMisfit('hey', udp)).toMatch(/not a udp load/);
  });

  it('lets iperf3 carry out UDP loads only, to a Service with a TCP control port and iperf3 servers', () => {
    expect(driverMisfit('iperf3', paced)).toMatch(/not a http load/);
    const scenario = (ports: Scenario['topology']['services'][number]['ports'], command: string[]) =>
      ({
        id: 's',
        loads: [{ id: 'udp', startMs: 0, spec: udp }],
        topology: { workloads: [{ name: 'backend', command }], services: [{ name: 'backend', selector: 'backend', ports }] },
      }) as unknown as Scenario;
    const udpPort = { name: 'udp', port: 5201, targetPort: 5201, protocol: 'UDP' as const };
    const tcpPort = { name: 'control', port: 5201, targetPort: 5201, protocol: 'TCP' as const };
    expect(scenarioMisfits('iperf3', scenario([udpPort, tcpPort], ['iperf3', '-s']))).toEqual([]);
    expect(scenarioMisfits('iperf3', scenario([udpPort], ['iperf3', '-s']))[0]).toMatch(/TCP control connection/);
    expect(scenarioMisfits('iperf3', scenario([udpPort, tcpPort], ['node', 'fixtures/reference-udp-echo.mjs']))[0]).toMatch(/iperf3 server/);
  });

  it('finds a scenario without load unfit for an external driver', () => {
    expect(scenarioMisfits('hey', { id: 'idle', loads: [], topology: { workloads: [], services: [] } })).toEqual(['idle: has no load for hey to drive']);
  });
});

describe('missingDriver', () => {
  it('names the binary and the install command when it is not on PATH', () => {
    expect(missingDriver('hey', '/nonexistent')).toBe('--driver hey: hey not found on PATH (install: apt-get install hey)');
    expect(missingDriver('builtin', '/nonexistent')).toBeUndefined();
  });
});

describe('plannedLoadMs', () => {
  it('bounds a load by the last step, the longest grace period and the settle time', () => {
    const s = {
      steps: [{ id: 'delete', when: { atMs: 1000 }, action: { kind: 'delete-pod', workload: 'gateway', pick: 'oldest' } }],
      end: { podGone: { step: 'delete' }, settleMs: 500 },
      topology: { workloads: [{ terminationGracePeriodSeconds: 5 }, { terminationGracePeriodSeconds: 9 }], services: [] },
      maxDurationMs: 60_000,
    } as unknown as Scenario;
    expect(plannedLoadMs(s)).toBe(10_500);
    expect(plannedLoadMs(s, 500)).toBe(10_000);
    expect(plannedLoadMs({ ...s, end: { afterMs: 3000 } })).toBe(3000);
    expect(plannedLoadMs({ ...s, maxDurationMs: 4000 })).toBe(4000);
  });
});
