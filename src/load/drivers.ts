// Which client carries out a scenario's load. `builtin` is the harness's own generators; `hey` and
// `iperf3` are independent clients (Debian packages) whose reports are parsed into the same records,
// so that the same assertions judge them: a second opinion on the generators, not a second verdict
// path. Each external client fits only the loads it can reproduce faithfully (see driverMisfit).

import type { LoadSpec } from '../model/load.ts';
import type { Scenario } from '../model/scenario.ts';
import { onPath } from '../profiles/requirements.ts';

export const DRIVERS = ['builtin', 'hey', 'iperf3'] as const;
export type LoadDriver = (typeof DRIVERS)[number];

export function isDriver(value: string): value is LoadDriver {
  return (DRIVERS as readonly string[]).includes(value);
}

/** The binary each external driver runs and how to install it (Debian package names). */
export const DRIVER_BINARIES: Record<Exclude<LoadDriver, 'builtin'>, { binary: string; install: string }> = {
  hey: { binary: 'hey', install: 'apt-get install hey' },
  iperf3: { binary: 'iperf3', install: 'apt-get install iperf3' },
};

/** Why `driver` cannot run here (its binary is missing, with the install hint), or undefined. */
export function missingDriver(driver: LoadDriver, path?: string): string | undefined {
  if (driver === 'builtin') return undefined;
  const { binary, install } = DRIVER_BINARIES[driver];
  return onPath(binary, path) ? undefined : `--driver ${driver}: ${binary} not found on PATH (install: ${install})`;
}

/**
 * hey's -q is an integer number of requests per second per worker. A closed load paced by a think
 * time sends at most 1000 / thinkMs a second per worker: hey's -q for it (hey's ticker does not wait
 * for the response, so it is the nearest hey comes to a think time).
 */
export function heyRate(spec: Extract<LoadSpec, { kind: 'http' }>): number | undefined {
  if (spec.mode === 'closed') return spec.ratePerWorker ?? (spec.thinkMs ? 1000 / spec.thinkMs : undefined);
  return spec.rate === undefined ? undefined : spec.rate / spec.connections;
}

/**
 * Why `driver` cannot carry out `spec` faithfully, or undefined when it can.
 * - hey: HTTP/1.1 loads paced per worker (closed with ratePerWorker, or open split evenly over the
 *   connections), at a whole number of requests per second per worker. hey's `-o csv` lists only
 *   requests that got a response; the driver runs a fixed count (-n) so that every missing row is
 *   a failed request. An unpaced load has no fixed count over a given time, so it does not fit.
 * - iperf3: UDP packet loads; its report is per stream, not per packet, and it echoes nothing.
 */
export function driverMisfit(driver: LoadDriver, spec: LoadSpec): string | undefined {
  if (driver === 'builtin') return undefined;
  if (driver === 'hey') {
    // One request at a set moment (a long request in flight at a stop) is no load to cross-check,
    // and hey cannot start one on time (its first request waits a tick of -q): the built-in client
    // sends it, and the Timeline says so (start-load.ts).
    // Likewise a lagging node's bursts, each at a pod's own address from the moment it is deleted.
    if (spec.kind === 'single' || spec.kind === 'lagging-node') return undefined;
    if (spec.kind !== 'http') return `hey drives HTTP/1.1 request loads, not a ${spec.kind} load`;
    const q = heyRate(spec);
    if (q === undefined) return 'hey needs a paced load (a per-worker rate): with an unpaced one its failed requests cannot be counted';
    if (!Number.isInteger(q) || q < 1) return `hey's -q is a whole number of requests per second per worker; this load needs ${q}`;
    return undefined;
  }
  if (spec.kind !== 'udp') return `iperf3 drives UDP packet loads, not a ${spec.kind} load`;
  return undefined;
}

/** The misfits of every load of `scenario` for `driver`, one line each. */
export function scenarioMisfits(driver: LoadDriver, scenario: Pick<Scenario, 'id' | 'loads' | 'topology'>): string[] {
  if (driver !== 'builtin' && scenario.loads.length === 0) return [`${scenario.id}: has no load for ${driver} to drive`];
  return scenario.loads.flatMap((l) => {
    const why = driverMisfit(driver, l.spec) ?? (driver === 'iperf3' && l.spec.kind === 'udp' ? iperf3TargetMisfit(l.spec, scenario.topology) : undefined);
    return why ? [`${scenario.id}: load "${l.id}": ${why}`] : [];
  });
}

/**
 * iperf3 opens a TCP control connection to the same address and port as its UDP data, and needs an
 * iperf3 server there: the Service must carry the port for both protocols, to pods running iperf3.
 */
function iperf3TargetMisfit(spec: Extract<LoadSpec, { kind: 'udp' }>, topology: Scenario['topology']): string | undefined {
  const service = topology.services.find((s) => s.name === spec.service);
  const udp = service?.ports.find((p) => p.protocol === 'UDP' && (spec.port === undefined || p.name === spec.port));
  const control = udp && service?.ports.find((p) => p.protocol !== 'UDP' && p.port === udp.port);
  if (!control) return `iperf3 needs its TCP control connection beside UDP: service ${spec.service} has no TCP port on the UDP port's number`;
  const servers = topology.workloads.filter((w) => w.name === service?.selector && w.command.some((arg) => /\biperf3\b/.test(arg)));
  if (servers.length === 0) return `iperf3 needs an iperf3 server behind service ${spec.service} (it echoes nothing: the built-in echo backends do not count what they receive)`;
  return undefined;
}

/**
 * How long a load of `scenario` starting at `startMs` is expected to run at most: external clients
 * take a fixed count or duration up front, where the built-in generators run until stopped. The
 * bound is the last step's time plus the longest grace period (a deleted pod is gone by then)
 * plus the settle time, or the fixed end; the runner stops the load at the real end, and a client
 * still running then is waited for (so the tail is measured too, never cut).
 */
export function plannedLoadMs(scenario: Pick<Scenario, 'steps' | 'end' | 'topology' | 'maxDurationMs'>, startMs = 0): number {
  const end = scenario.end;
  let ms: number;
  if ('afterMs' in end) ms = end.afterMs;
  else {
    const lastStep = Math.max(0, ...scenario.steps.map((s) => ('atMs' in s.when ? s.when.atMs : 0)));
    const grace = Math.max(0, ...scenario.topology.workloads.map((w) => w.terminationGracePeriodSeconds)) * 1000;
    ms = Math.min(scenario.maxDurationMs, lastStep + grace + ('settleMs' in end ? end.settleMs : 0));
  }
  return Math.max(1000, ms - startMs);
}
