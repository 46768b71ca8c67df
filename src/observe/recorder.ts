// The Recorder is where every part of a run writes what it saw. Providers write events, connection
// records and pod output; load generators write request records. Scenarios may wait on events
// (`waitFor`) but nothing reads the Timeline to decide a verdict until the run is over.

import { Clock } from './clock.ts';
import { redact } from './redact.ts';
import {
  emptyTimeline,
  type ActiveConnectionsSample,
  type AllocationRecord,
  type ConnectionRecord,
  type EventKind,
  type FlowRecord,
  type HarnessSample,
  type RequestRecord,
  type StreamRecord,
  type Timeline,
  type TimelineEvent,
  type UdpFlowRecord,
} from '../model/timeline.ts';

type Waiter = { match: (e: TimelineEvent) => boolean; resolve: (e: TimelineEvent) => void };

export class Recorder {
  readonly clock: Clock;
  readonly timeline: Timeline;
  private waiters = new Set<Waiter>();
  private listeners = new Set<(e: TimelineEvent) => void>();
  private nextConnectionId = 1;
  private nextUdpFlowId = 1;

  constructor(clock = new Clock()) {
    this.clock = clock;
    this.timeline = emptyTimeline(clock.originEpochMs);
  }

  now(): number {
    return this.clock.now();
  }

  event(kind: EventKind, fields: Omit<TimelineEvent, 't' | 'kind'> & { t?: number } = {}): TimelineEvent {
    const event: TimelineEvent = { ...fields, t: fields.t ?? this.clock.now(), kind };
    this.timeline.events.push(event);
    for (const listener of this.listeners) listener(event);
    for (const waiter of this.waiters) {
      if (waiter.match(event)) {
        this.waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
    return event;
  }

  /** Called for every event from now on; returns an unsubscribe function. */
  onEvent(listener: (e: TimelineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Opens a connection record; the caller updates it in place as the connection progresses. */
  openConnection(fields: Omit<ConnectionRecord, 'id' | 'open' | 'bytesIn' | 'bytesOut' | 'upstream'>): ConnectionRecord {
    const record: ConnectionRecord = {
      ...fields,
      id: this.nextConnectionId++,
      open: this.clock.now(),
      upstream: 'open',
      bytesIn: 0,
      bytesOut: 0,
    };
    this.timeline.connections.push(record);
    return record;
  }

  /** Opens a UDP flow record (a balancer's conntrack entry); the caller updates it in place. */
  openUdpFlow(fields: Omit<UdpFlowRecord, 'id' | 'open' | 'last' | 'end' | 'packetsIn' | 'packetsOut'>): UdpFlowRecord {
    const now = this.clock.now();
    const record: UdpFlowRecord = { ...fields, id: this.nextUdpFlowId++, open: now, last: now, end: 'open', packetsIn: 0, packetsOut: 0 };
    (this.timeline.udpFlows ??= []).push(record);
    return record;
  }

  /** Adds the final accounting of one flow of a packet load. */
  flow(record: FlowRecord): void {
    (this.timeline.flows ??= []).push(record);
  }

  /** Adds one TURN allocation of a TURN load. */
  allocation(record: AllocationRecord): void {
    (this.timeline.allocations ??= []).push(record);
  }

  /** Adds the final accounting of one TCP stream of a stream load. */
  stream(record: StreamRecord): void {
    (this.timeline.streams ??= []).push(record);
  }

  request(record: RequestRecord): void {
    this.timeline.requests.push(record);
  }

  activeConnections(sample: ActiveConnectionsSample): void {
    (this.timeline.activeConnections ??= []).push(sample);
  }

  harness(sample: HarnessSample): void {
    this.timeline.harness.push(sample);
  }

  podOutput(pod: string, stream: 'stdout' | 'stderr', line: string): void {
    // Pod output goes into the report: a pod that echoes its credentials must not publish them.
    (this.timeline.podOutput[pod] ??= []).push({ t: this.clock.now(), stream, line: redact(line) });
  }

  /**
   * Resolves with the first event, past or future, that matches; rejects after `timeoutMs` or when
   * `signal` aborts. Looking at past events too avoids the race where the event fires before the wait.
   */
  waitFor(
    match: (e: TimelineEvent) => boolean,
    { timeoutMs, signal, what }: { timeoutMs: number; signal?: AbortSignal; what: string },
  ): Promise<TimelineEvent> {
    const past = this.timeline.events.find(match);
    if (past) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve: (e) => {
          cleanup();
          resolve(e);
        },
      };
      const onAbort = () => {
        cleanup();
        reject(signal?.reason ?? new Error(`aborted while waiting for ${what}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }
}
