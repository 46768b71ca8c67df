// Hands a scenario result from a test file to the run's zerodrop report (suites/global-setup.ts).

import { inject } from 'vitest';
import { dropResult } from '../../src/report/collect.ts';
import type { ScenarioResult } from '../../src/report/results.ts';

export async function collectResult(result: ScenarioResult): Promise<void> {
  let dir: string | undefined;
  try {
    dir = inject('zerodropCollectDir');
  } catch {
    return; // not under the suites' vitest config: nothing collects
  }
  if (dir) await dropResult(dir, result);
}
