// When a load with `startOn` starts: the moment of the run its trigger names (LoadTrigger in
// src/model/scenario.ts), read from the Timeline as the run writes it.

import type { LoadTrigger } from '../model/scenario.ts';
import type { TimelineEvent } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';

/**
 * Follows the Timeline, one event at a time, until the trigger holds. The Timeline is read in order
 * from its start, so a trigger met before the load was armed is not missed.
 */
export class TriggerWatch {
  private stepAt?: number;
  private readonly newPods = new Set<string>();
  private readonly readyPods = new Set<string>();
  private readonly trigger: LoadTrigger['newPodReady'];

  constructor(trigger: LoadTrigger) {
    this.trigger = trigger.newPodReady;
  }

  /** Takes the next event of the Timeline; true once the trigger has happened. */
  feed(e: TimelineEvent): boolean {
    const t = this.trigger;
    if (this.stepAt === undefined) {
      if (e.kind === 'chaos' && e.detail?.['step'] === t.afterStep) this.stepAt = e.t;
      return false;
    }
    if (e.workload !== t.workload || e.pod === undefined) return this.done();
    if (e.kind === 'pod-created') this.newPods.add(e.pod);
    // A pod counts once, at its first readiness: one that flaps is still the same replacement.
    else if (e.kind === 'pod-ready' && this.newPods.has(e.pod)) this.readyPods.add(e.pod);
    return this.done();
  }

  private done(): boolean {
    return this.readyPods.size >= this.trigger.nth;
  }
}

/** Resolves when `trigger` has happened in the run `recorder` records; rejects when `signal` aborts. */
export function whenTriggered(trigger: LoadTrigger, recorder: Recorder, signal: AbortSignal): Promise<void> {
  const watch = new TriggerWatch(trigger);
  if (recorder.timeline.events.some((e) => watch.feed(e))) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const onAbort = () => finish(() => reject(signal.reason));
    const unsubscribe = recorder.onEvent((e) => {
      if (watch.feed(e)) finish(resolve);
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The trigger in words, for a load that never started. */
export function describeTrigger(trigger: LoadTrigger): string {
  const t = trigger.newPodReady;
  return `pod ${t.nth} of ${t.workload} created after step ${t.afterStep} turning ready`;
}
