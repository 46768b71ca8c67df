// Builds synthetic Timelines for the assertion tests: a few pods behind a Service, a drain with a
// chosen (correct or broken) behaviour, and steady traffic routed the way the Service's balancer
// would route it. Not used at run time.

import type { Expectation } from '../src/model/scenario.ts';
import type { AssertionResult } from '../src/model/verdict.ts';
import { programmedAt, podLifecycle } from '../src/observe/phase.ts';
import { evaluate } from '../src/assert/index.ts';
import {
  emptyTimeline,
  type ConnectionRecord,
  type EventKind,
  type HarnessSample,
  type RequestRecord,
  type Timeline,
  type TimelineEvent,
} from '../src/model/timeline.ts';
import { RequestTable } from '../src/model/request-table.ts';

export interface PodSpec {
  workload?: string;
  service?: string;
  created?: number;
  /** pod-ready time; the balancer programs it 1 ms later. */
  ready?: number;
}

export interface DrainSpec {
  /** delete-issued time. */
  at: number;
  /** Id of the chaos step that deleted it: a `chaos` event is written at `at`. */
  step?: string;
  workload?: string;
  service?: string;
  gracePeriodSeconds?: number;
  /** lb-deprogrammed this long after the delete (the Service's programming delay). */
  deprogramAfterMs?: number;
  /** preStop duration; 0 means no preStop hook. */
  preStopMs?: number;
  /** How long the process takes to exit after SIGTERM; 'never' hangs until SIGKILL. */
  exitAfterSigtermMs?: number | 'never';
  exitCode?: number;
}

export interface TrafficSpec {
  load: string;
  from: number;
  to: number;
  everyMs: number;
  durationMs: number;
  service?: string;
  /** A pod that is alive but refuses new connections at t (a mutant). */
  refuses?: (pod: string, t: number) => boolean;
}

export class TimelineBuilder {
  readonly timeline: Timeline = emptyTimeline(1_700_000_000_000);
  private readonly rowOf = new Map<RequestRecord, number>();
  private nextRequestId = 1;
  private nextConnectionId = 1;
  private nextPort = 0;

  event(t: number, kind: EventKind, fields: Omit<TimelineEvent, 't' | 'kind'> = {}): this {
    this.timeline.events.push({ ...fields, t, kind });
    return this;
  }

  /** pod-created, pod-started, pod-ready, endpoint ready, lb-programmed. */
  pod(pod: string, spec: PodSpec = {}): this {
    const { workload = 'backend', service = 'backend', created = 0, ready = 100 } = spec;
    this.event(created, 'pod-created', { pod, workload });
    this.event(created + 10, 'pod-started', { pod, workload });
    this.event(ready, 'pod-ready', { pod, workload });
    this.event(ready, 'endpoint-changed', { pod, service, detail: { ready: true, serving: true, terminating: false } });
    this.event(ready + 1, 'lb-programmed', { pod, service });
    return this;
  }

  /**
   * The Kubernetes deletion sequence for one pod, with the behaviour chosen by `spec`: delete,
   * endpoint terminating, deprogram after a delay, preStop, SIGTERM, exit (or SIGKILL when the grace
   * period runs out first), pod removed.
   */
  drain(pod: string, spec: DrainSpec): this {
    const {
      at,
      workload = 'backend',
      service = 'backend',
      gracePeriodSeconds = 30,
      deprogramAfterMs = 20,
      preStopMs = 0,
      exitAfterSigtermMs = 10,
      exitCode = 0,
    } = spec;
    if (spec.step !== undefined) {
      this.event(at, 'chaos', { pod, workload, message: `delete ${pod}`, detail: { step: spec.step, action: 'delete-pod' } });
    }
    this.event(at, 'delete-issued', { pod, workload, detail: { gracePeriodSeconds } });
    this.event(at, 'endpoint-changed', { pod, service, detail: { ready: false, serving: true, terminating: true } });
    this.event(at + deprogramAfterMs, 'lb-deprogrammed', { pod, service });
    const killAt = at + gracePeriodSeconds * 1000;
    let sigterm = at;
    if (preStopMs > 0) {
      this.event(at, 'prestop-start', { pod });
      sigterm = Math.min(at + preStopMs, killAt);
      this.event(sigterm, 'prestop-end', { pod, detail: { timedOut: at + preStopMs > killAt } });
    }
    this.event(sigterm, 'sigterm', { pod, detail: { signal: 'SIGTERM' } });
    const exitAt = exitAfterSigtermMs === 'never' ? Infinity : sigterm + exitAfterSigtermMs;
    let gone: number;
    if (exitAt > killAt) {
      this.event(killAt, 'sigkill', { pod });
      this.event(killAt, 'exit', { pod, detail: { code: null, signal: 'SIGKILL' } });
      gone = killAt;
    } else {
      this.event(exitAt, 'exit', { pod, detail: { code: exitCode } });
      gone = exitAt;
    }
    this.event(gone + 1, 'endpoint-changed', { pod, service, detail: { removed: true } });
    this.event(gone + 1, 'pod-removed', { pod, workload });
    return this;
  }

  /** A process of the pod's container (process-started, and process-exited when `exited` is given). */
  process(pod: string, pid: number, command: string, started: number, exited?: number): this {
    this.event(started, 'process-started', { pod, detail: { pid, ppid: 1, command } });
    if (exited !== undefined) this.event(exited, 'process-exited', { pod, detail: { pid, ppid: 1, command } });
    return this;
  }

  /** A configuration reload of the pod: reload-start at `at`, reload-end `tookMs` later with `end` as its detail. */
  reload(pod: string, at: number, tookMs = 10, end: Record<string, unknown> = { signal: 'SIGHUP', sent: true }): this {
    this.event(at, 'reload-start', { pod, detail: { how: 'SIGHUP' } });
    this.event(at + tookMs, 'reload-end', { pod, detail: end });
    return this;
  }

  request(fields: Partial<RequestRecord> & Pick<RequestRecord, 'start' | 'end'>): RequestRecord {
    const record: RequestRecord = { id: this.nextRequestId++, load: 'http', outcome: 'ok', newConnection: true, ...fields };
    this.timeline.requests.push(record);
    this.rowOf.set(record, this.timeline.requests.length - 1);
    return record;
  }

  /** `record` as the timeline holds it now (after a join changed it); before build() only. */
  now(record: RequestRecord): RequestRecord {
    const i = this.rowOf.get(record);
    if (i === undefined) throw new Error('not a request of this builder');
    return this.timeline.requests.at(i);
  }

  connection(fields: Partial<ConnectionRecord> & Pick<ConnectionRecord, 'open'>): ConnectionRecord {
    const record: ConnectionRecord = {
      id: this.nextConnectionId++,
      service: 'backend',
      clientPort: 50_000 + this.nextConnectionId,
      upstream: 'ok',
      bytesIn: 100,
      bytesOut: 200,
      ...fields,
    };
    this.timeline.connections.push(record);
    return record;
  }

  /**
   * One request per fresh connection every `everyMs`, routed round robin over the pods the balancer
   * had programmed at its start, recorded as the client sees it: a request refused by the pod or
   * with no endpoint is a `reset` with no pod (the balancer accepted the client, then closed it);
   * one whose pod died under it is an `eof`. Client ports cycle over 64 values, so they are reused.
   * Call after the pods' lifecycles are written.
   */
  traffic(spec: TrafficSpec): this {
    const { load, from, to, everyMs, durationMs, service = 'backend', refuses = () => false } = spec;
    const pods = [...new Set(this.timeline.events.filter((e) => e.kind === 'lb-programmed').map((e) => e.pod))]
      .filter((p): p is string => p !== undefined)
      .sort();
    let turn = 0;
    for (let start = from; start < to; start += everyMs) {
      const localPort = 40_000 + (this.nextPort++ % 64);
      const live = pods.filter((p) => programmedAt(this.timeline, p, start) === true);
      const pod = live.length > 0 ? live[turn++ % live.length] : undefined;
      const base = { load, start, localPort, newConnection: true, connectionStart: start } as const;
      const open = start + 0.2;
      if (pod === undefined) {
        this.request({ ...base, end: start + 0.5, outcome: 'reset', error: 'ECONNRESET' });
        this.connection({ service, clientPort: localPort, open, close: start + 0.5, upstream: 'no-endpoint' });
        continue;
      }
      const lc = podLifecycle(this.timeline, pod);
      const death = Math.min(lc.exit ?? Infinity, lc.killed ?? Infinity);
      const end = start + durationMs;
      if (death <= start || refuses(pod, start)) {
        this.request({ ...base, end: start + 0.5, outcome: 'reset', error: 'ECONNRESET' });
        this.connection({ service, clientPort: localPort, pod, open, close: start + 0.5, upstream: 'refused' });
      } else if (death < end) {
        this.request({ ...base, end: death, outcome: 'eof', error: 'socket hang up' });
        this.connection({ service, clientPort: localPort, pod, open, close: death, upstream: 'reset' });
      } else {
        this.request({ ...base, end, outcome: 'ok', status: 200, pod });
        this.connection({ service, clientPort: localPort, pod, open, close: end, upstream: 'ok' });
      }
    }
    return this;
  }

  harness(t: number, loopDelayMaxMs: number, spent?: Omit<HarnessSample, 't' | 'loopDelayMaxMs'>): this {
    this.timeline.harness.push({ t, loopDelayMaxMs, ...spent });
    return this;
  }

  /** The timeline with events in time order (stable for equal times). */
  build(): Timeline {
    this.timeline.events.sort((a, b) => a.t - b.t);
    const sorted = this.timeline.requests.toArray().sort((a, b) => a.start - b.start);
    this.timeline.requests = RequestTable.from(sorted);
    return this.timeline;
  }
}

/** How the deleted pod behaves: the reference drain and the mutants the assertions must catch. */
export type DrainMode =
  | 'correct'
  | 'exit-on-sigterm'
  | 'refuse-after-sigterm'
  | 'hang-until-killed'
  | 'force-delete'
  | 'connect-after-deprogram';

/** Times of the standard scenario: three backends, load 200..4000 ms, backend-2 deleted at 1000 ms by step `delete`. */
export const SCENARIO = { deleteAt: 1000, pod: 'backend-2', step: 'delete', load: 'http' } as const;

/**
 * backend-1..3 behind Service `backend`, steady HTTP load (one request per connection every 5 ms,
 * 20 ms each) from 200 to 4000 ms, backend-2 deleted at 1000 ms by step `delete`:
 * - correct: preStop 1 s, deprogrammed after 50 ms, exits 20 ms after SIGTERM (t = 2020).
 * - exit-on-sigterm: no preStop, exits at SIGTERM; the balancer deprograms 50 ms later.
 * - refuse-after-sigterm: no preStop, deprogrammed after 500 ms, refuses new connections after SIGTERM, exits after 1 s.
 * - hang-until-killed: no preStop, grace 2 s, never exits on SIGTERM: SIGKILL at 3000.
 * - force-delete: grace 0: SIGTERM, SIGKILL and exit at 1000; deprogrammed 50 ms later.
 * - connect-after-deprogram: correct, but the balancer routes one more connection to backend-2 100 ms after deprogramming it.
 * `drain` overrides the deleted pod's behaviour.
 */
export function drainScenario(mode: DrainMode, drain: Partial<DrainSpec> = {}): TimelineBuilder {
  const b = new TimelineBuilder();
  for (const pod of ['backend-1', 'backend-2', 'backend-3']) b.pod(pod);
  b.event(200, 'load-start', { detail: { load: SCENARIO.load } });
  const base: DrainSpec = { at: SCENARIO.deleteAt, step: SCENARIO.step };
  const modes: Record<DrainMode, DrainSpec> = {
    correct: { ...base, preStopMs: 1000, deprogramAfterMs: 50, exitAfterSigtermMs: 20 },
    'connect-after-deprogram': { ...base, preStopMs: 1000, deprogramAfterMs: 50, exitAfterSigtermMs: 20 },
    'exit-on-sigterm': { ...base, deprogramAfterMs: 50, exitAfterSigtermMs: 0 },
    'refuse-after-sigterm': { ...base, deprogramAfterMs: 500, exitAfterSigtermMs: 1000 },
    'hang-until-killed': { ...base, gracePeriodSeconds: 2, deprogramAfterMs: 50, exitAfterSigtermMs: 'never' },
    'force-delete': { ...base, gracePeriodSeconds: 0, deprogramAfterMs: 50 },
  };
  b.drain(SCENARIO.pod, { ...modes[mode], ...drain });
  const refuses =
    mode === 'refuse-after-sigterm'
      ? (pod: string, t: number) => pod === SCENARIO.pod && t >= SCENARIO.deleteAt
      : undefined;
  b.traffic({ load: SCENARIO.load, from: 200, to: 4000, everyMs: 5, durationMs: 20, ...(refuses ? { refuses } : {}) });
  if (mode === 'connect-after-deprogram') {
    const t = SCENARIO.deleteAt + 50 + 100;
    b.connection({ clientPort: 39_999, pod: SCENARIO.pod, open: t, close: t + 5 });
    b.request({ load: SCENARIO.load, start: t - 0.2, end: t + 5, pod: SCENARIO.pod, localPort: 39_999, connectionStart: t - 0.2 });
  }
  b.event(4000, 'load-stop', { detail: { load: SCENARIO.load } });
  return b;
}

/** Evaluates one expectation through `evaluate` (with its join), for tests. */
export function evaluateOne(expectation: Expectation, timeline: Timeline): AssertionResult {
  const [result] = evaluate([expectation], timeline);
  if (!result) throw new Error('evaluate returned nothing');
  return result;
}
