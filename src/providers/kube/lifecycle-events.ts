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
  StopSignalSent: 'sigterm',
  ContainerKilled: 'sigkill',
} as const;

export type LifecycleEventReason = keyof typeof LIFECYCLE_EVENT_REASONS;
