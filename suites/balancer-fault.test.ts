// noNewConnectionsAfterDeprogram judges the balancer, not the backend, so its mutant is a broken
// balancer: one that reports a pod deprogrammed on time but keeps sending it new connections.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Recorder } from '../src/observe/recorder.ts';
import { referenceProfile } from '../src/profiles/reference.ts';
import { LocalProvider } from '../src/providers/local/local-provider.ts';
import { packageRoot } from '../src/paths.ts';
import { runScenario } from '../src/runner/run-scenario.ts';
import backendDeleteHttp from '../src/scenarios/backend-delete-http.ts';
import { describeResult } from './helpers/run-case.ts';

async function run(balancerFault?: 'never-deprogram') {
  const recorder = new Recorder();
  await using provider = new LocalProvider({ recorder, runId: randomBytes(4).toString('hex'), cwd: packageRoot, ...(balancerFault ? { balancerFault } : {}) });
  // Keep-alive off: every request is a new connection, so a stale balancer shows up at once.
  const scenario = backendDeleteHttp.build(referenceProfile, { ...backendDeleteHttp.defaults });
  const load = scenario.loads[0]!;
  load.spec = { kind: 'http', service: 'backend', path: '/', keepAlive: false, mode: 'open', rate: 100, connections: 10, timeoutMs: 3000 };
  const outcome = await runScenario(scenario, { provider, recorder, signal: AbortSignal.timeout(60_000) });
  const check = outcome.assertions.find((a) => a.name === 'noNewConnectionsAfterDeprogram')!;
  return { outcome, check, text: describeResult({ id: scenario.id, profile: 'reference', ...outcome }) };
}

describe('noNewConnectionsAfterDeprogram', () => {
  it('passes with a correct Service load balancer', async () => {
    const { check, text } = await run();
    expect(check.verdict, text).toBe('pass');
  });

  it('fails with a balancer that keeps routing to a pod it reported deprogrammed', async () => {
    const { outcome, check, text } = await run('never-deprogram');
    expect(check.verdict, text).toBe('fail');
    expect(check.message).toMatch(/backend-1/);
    expect(outcome.verdict).toBe('fail');
  });
});
