// The reference gateway (Node only) passes every HTTP gateway scenario on any machine.

import { describe, it } from 'vitest';
import { runCase } from '../helpers/run-case.ts';
import { expectDrainCorrect, HTTP_GATEWAY_SCENARIOS } from './gateway-cases.ts';

describe('reference gateway', () => {
  it.each(HTTP_GATEWAY_SCENARIOS)('passes %s', async (scenario) => {
    expectDrainCorrect(await runCase(scenario, 'reference'));
  });
});
