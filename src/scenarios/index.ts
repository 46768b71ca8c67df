// The catalog, in the order `zerodrop list` and reports show it. Ids are stable: they name tests,
// report rows and CLI filters.

import backendDeleteHttp from './backend-delete-http.ts';
import backendIdleExit from './backend-idle-exit.ts';
import backendLongRequest from './backend-long-request.ts';
import backendRolloutHttp from './backend-rollout-http.ts';
import backendSigtermKeepsAccepting from './backend-sigterm-keeps-accepting.ts';
import forceDelete from './force-delete.ts';
import type { ScenarioDefinition } from './definition.ts';

export const catalog: readonly ScenarioDefinition[] = [
  backendDeleteHttp,
  backendRolloutHttp,
  backendSigtermKeepsAccepting,
  backendIdleExit,
  backendLongRequest,
  forceDelete,
];

export function findScenario(id: string): ScenarioDefinition | undefined {
  return catalog.find((s) => s.id === id);
}
