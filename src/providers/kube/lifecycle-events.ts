// What a kubelet never writes: when it started and ended a container's preStop hook, sent its stop
// signal and killed it. The API shows none of these (a `Killing` Event says only that the stop
// began), so on a cluster a Timeline has them only where the app logs its signal. zerodrop's own node
// agent (the netns provider's) writes each as a core/v1 Event from a component of its own, so that a
// cluster of its own shows a pod's whole shutdown as the local provider does; the observers turn
// those Events, and only those (never a kubelet's), into the same lifecycle events.

/** `source.component` and `reportingComponent` of the lifecycle Events: no kubelet writes it. */
export const LIFECYCLE_EVENT_COMPONENT = 'zerodrop-node-agent';

/** Event reason -> the Timeline event it stands for. */
export const LIFECYCLE_EVENT_REASONS = {
  PreStopStarted: 'prestop-start',
  PreStopEnded: 'prestop-end',
  /** The hook still ran when the grace period ran out: the stop signal is sent anyway. */
  PreStopTimedOut: 'prestop-end',
  StopSignalSent: 'sigterm',
  ContainerKilled: 'sigkill',
} as const;

export type LifecycleEventReason = keyof typeof LIFECYCLE_EVENT_REASONS;

/**
 * The message of each lifecycle Event, written by the node agent and read by the observers: the
 * signal is in StopSignalSent's message, so the two sides share these two functions.
 */
export const lifecycleMessage = {
  PreStopStarted: (container: string) => `Running the preStop hook of container ${container}`,
  PreStopEnded: (container: string, failed: boolean) => `The preStop hook of container ${container} ended${failed ? ' (failed)' : ''}`,
  PreStopTimedOut: (container: string) => `The preStop hook of container ${container} outlasted the grace period`,
  StopSignalSent: (container: string, signal: string) => `Sent ${signal} to container ${container}`,
  ContainerKilled: (container: string) => `Sent SIGKILL to container ${container}: the grace period ran out`,
} satisfies Record<LifecycleEventReason, (container: string, ...rest: never[]) => string>;

/** What a lifecycle Event says beyond its reason: the signal sent, or that the hook timed out. */
export function lifecycleDetail(reason: LifecycleEventReason, message: string | undefined): { signal?: string; timedOut?: true } {
  if (reason === 'StopSignalSent') {
    const signal = /^Sent (SIG[A-Z0-9]+) to container /.exec(message ?? '')?.[1];
    return signal ? { signal } : {};
  }
  if (reason === 'ContainerKilled') return { signal: 'SIGKILL' };
  if (reason === 'PreStopTimedOut') return { timedOut: true };
  return {};
}
