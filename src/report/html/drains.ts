// Drain timings of every deleted pod, measured on the run clock: how long the load balancer took to
// stop sending new connections after the delete, how long the process took to exit after SIGTERM,
// and what its connections did meanwhile (from the balancer's connection records).

import type { Timeline } from '../../model/timeline.ts';
import { podLifecycle, type PodLifecycle } from '../../observe/phase.ts';

export interface DrainTiming {
  lifecycle: PodLifecycle;
  deleteToDeprogrammed?: number;
  deleteToSigterm?: number;
  sigtermToExit?: number;
  deleteToExit?: number;
  /** Connections the balancer had open to the pod at SIGTERM. */
  openAtSigterm?: number;
  /** Last of the pod's connections to close, relative to SIGTERM. */
  lastCloseAfterSigterm?: number;
  /** Connections opened to the pod after the balancer deprogrammed it (should be 0). */
  newAfterDeprogram: number;
  /** Requests the pod served successfully after its SIGTERM. */
  servedAfterSigterm: number;
  ending: string;
}

const diff = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined ? b - a : undefined);

export function drainTimings(timeline: Timeline): DrainTiming[] {
  const deleted = [...new Set(timeline.events.filter((e) => e.kind === 'delete-issued' && e.pod !== undefined).map((e) => e.pod as string))];
  return deleted.map((pod) => {
    const lc = podLifecycle(timeline, pod);
    const conns = timeline.connections.filter((c) => c.pod === pod);
    const timing: DrainTiming = {
      lifecycle: lc,
      newAfterDeprogram: lc.deprogrammed === undefined ? 0 : conns.filter((c) => c.open > (lc.deprogrammed as number)).length,
      servedAfterSigterm:
        lc.sigterm === undefined ? 0 : timeline.requests.count((r) => r.ok && r.end > (lc.sigterm as number) && r.pod === pod),
      ending:
        lc.killed !== undefined
          ? 'killed by SIGKILL'
          : lc.exit !== undefined
            ? lc.exitSignal !== undefined
              ? `exited by ${lc.exitSignal}`
              : `exited with code ${String(lc.exitCode)}`
            : 'still running at the end',
    };
    const set = <K extends keyof DrainTiming>(key: K, value: DrainTiming[K] | undefined) => {
      if (value !== undefined) timing[key] = value;
    };
    set('deleteToDeprogrammed', diff(lc.deleteIssued, lc.deprogrammed));
    set('deleteToSigterm', diff(lc.deleteIssued, lc.sigterm));
    set('sigtermToExit', diff(lc.sigterm, lc.exit ?? lc.killed));
    set('deleteToExit', diff(lc.deleteIssued, lc.exit ?? lc.killed));
    if (lc.sigterm !== undefined) {
      const at = lc.sigterm;
      set('openAtSigterm', conns.filter((c) => c.open <= at && (c.close === undefined || c.close > at)).length);
      const closes = conns.map((c) => c.close).filter((t): t is number => t !== undefined);
      if (closes.length > 0) set('lastCloseAfterSigterm', closes.reduce((a, b) => Math.max(a, b)) - at);
    }
    return timing;
  });
}
