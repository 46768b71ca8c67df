// Cross-validation of the UDP loss accounting with iperf3 (docs/benchmarks.md). iperf3 needs an iperf3 server
// on the far side (it echoes nothing) and a TCP control connection to the same port, so the two
// clients cannot share a backend: the built-in generator sends to the reference UDP echo, iperf3 to
// an iperf3 server, each the only pod behind a Service whose load balancer carries its traffic
// (src/providers/local/balancer.ts, udp-balancer.ts). The scenario shape is the same for both: the
// pod is deleted half a second into 2 s of flows, either with a preStop sleep that outlasts them
// (the drain-correct shape: nothing may be lost) or with none (naive: SIGTERM comes while the
// flows still run). Both backends stop taking datagrams at SIGTERM: iperf3 exits (its own
// behaviour), so the echo runs as DRAIN_MODE=refuse-after-sigterm (closes its socket, stays alive
// and ready). What the two must agree on is zero loss vs. some loss. In the naive case the
// built-in generator counts the packets the echo no longer answered; iperf3 reports an error
// (the server went away mid-test), which the driver counts as every packet unconfirmed.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LoadDriver } from '../../src/load/drivers.ts';
import { scenarioMisfits } from '../../src/load/drivers.ts';
import type { Scenario } from '../../src/model/scenario.ts';
import { defaultProbe, type Topology } from '../../src/model/workload.ts';
import { Recorder } from '../../src/observe/recorder.ts';
import { onPath } from '../../src/profiles/requirements.ts';
import { LocalProvider } from '../../src/providers/local/local-provider.ts';
import { packageRoot } from '../../src/paths.ts';
import { runScenario } from '../../src/runner/run-scenario.ts';
import { udpEchoService, udpEchoWorkload } from '../../src/scenarios/udp-echo-backend.ts';
import { describeResult } from '../helpers/run-case.ts';

const IPERF3_PORT = 5201;

function topology(backend: 'echo' | 'iperf3', preStopSeconds: number): Topology {
  if (backend === 'echo') {
    return {
      workloads: [udpEchoWorkload({ name: 'backend', replicas: 1, graceSeconds: 5, preStopSeconds, env: { DRAIN_MODE: 'refuse-after-sigterm', DRAIN_IDLE_MS: '300' } })],
      services: [udpEchoService('backend', 100)],
    };
  }
  return {
    workloads: [
      {
        name: 'backend',
        replicas: 1,
        // The pod's own address, as a container binds its pod IP; iperf3 exits at SIGTERM.
        command: ['sh', '-c', `exec iperf3 -s -B "$POD_IP" -p ${IPERF3_PORT}`],
        env: {},
        ports: [
          { name: 'udp', containerPort: IPERF3_PORT, protocol: 'UDP' },
          { name: 'control', containerPort: IPERF3_PORT, protocol: 'TCP' },
        ],
        readinessProbe: defaultProbe({ tcpSocket: { port: IPERF3_PORT } }),
        ...(preStopSeconds > 0 ? { preStop: { sleep: { seconds: preStopSeconds } } } : {}),
        terminationGracePeriodSeconds: 5,
        strategy: { maxSurge: 1, maxUnavailable: 0 },
        labels: { 'zerodrop.dev/profile': 'iperf3' },
      },
    ],
    services: [
      {
        name: 'backend',
        selector: 'backend',
        ports: [
          { name: 'udp', port: IPERF3_PORT, targetPort: IPERF3_PORT, protocol: 'UDP' },
          { name: 'control', port: IPERF3_PORT, targetPort: IPERF3_PORT, protocol: 'TCP' },
        ],
        programmingDelayMs: 100,
      },
    ],
  };
}

function scenario(backend: 'echo' | 'iperf3', preStopSeconds: number): Scenario {
  return {
    id: 'backend-delete-udp',
    profile: `${backend}${preStopSeconds > 0 ? '' : '-naive'}`,
    topology: topology(backend, preStopSeconds),
    loads: [
      {
        id: 'udp',
        startMs: 0,
        spec: { kind: 'udp', service: 'backend', port: 'udp', flows: 2, ratePerFlow: 200, durationMs: 2000, payloadBytes: 64, replyTimeoutMs: 1000 },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: 500 }, action: { kind: 'delete-pod', workload: 'backend', pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: 200 },
    maxDurationMs: 20_000,
    expectations: [{ assert: 'noLostPackets', load: 'udp' }],
  };
}

async function run(driver: LoadDriver, preStopSeconds: number) {
  const recorder = new Recorder();
  await using provider = new LocalProvider({ recorder, runId: randomBytes(4).toString('hex'), cwd: packageRoot });
  const s = scenario(driver === 'iperf3' ? 'iperf3' : 'echo', preStopSeconds);
  expect(scenarioMisfits(driver, s)).toEqual([]);
  const outcome = await runScenario(s, { provider, recorder, signal: AbortSignal.timeout(60_000), driver });
  const flows = recorder.timeline.flows ?? [];
  const lost = flows.reduce((n, f) => n + f.lost, 0);
  const sent = flows.reduce((n, f) => n + f.sent, 0);
  const check = outcome.assertions.find((a) => a.name === 'noLostPackets');
  const notes = recorder.timeline.events.filter((e) => e.kind === 'note').map((e) => e.message);
  const text = `${describeResult({ id: s.id, profile: s.profile, ...outcome })}\n  ${driver}: ${sent} sent, ${lost} lost\n  ${notes.join('\n  ')}`;
  return { outcome, lost, sent, check, text };
}

describe.skipIf(!onPath('iperf3'))('UDP loss: built-in and iperf3 agree', () => {
  it('drain-correct (preStop outlasts the flows): nothing lost with either client', async () => {
    const builtin = await run('builtin', 3);
    const iperf3 = await run('iperf3', 3);
    const both = `${builtin.text}\n${iperf3.text}`;
    expect(builtin.sent, both).toBeGreaterThan(500);
    expect(iperf3.sent, both).toBeGreaterThan(500);
    expect([builtin.lost, iperf3.lost], both).toEqual([0, 0]);
    expect([builtin.check?.verdict, iperf3.check?.verdict], both).toEqual(['pass', 'pass']);
  });

  it('naive (no preStop): packets lost with both clients', async () => {
    const builtin = await run('builtin', 0);
    const iperf3 = await run('iperf3', 0);
    const both = `${builtin.text}\n${iperf3.text}`;
    expect(builtin.lost, both).toBeGreaterThan(0);
    expect(iperf3.lost, both).toBeGreaterThan(0);
    expect([builtin.check?.verdict, iperf3.check?.verdict], both).toEqual(['fail', 'fail']);
  });
});
