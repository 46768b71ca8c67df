import { describe, expect, it } from 'vitest';
import type { Scenario } from '../model/scenario.ts';
import { Recorder } from '../observe/recorder.ts';
import { findProfile } from '../profiles/index.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import { runScenario } from '../runner/run-scenario.ts';
import { findScenario } from '../scenarios/index.ts';
import { optionsFor } from '../runner/run-matrix.ts';
import type { DrainNodeOptions, PodInfo, Provider } from './provider.ts';
import { unsupported } from './support.ts';
import { cacheDir } from './netns/go-module-build.ts';
import { defineProfile } from '../profiles/define.ts';
import { packageRoot } from '../paths.ts';
import { join } from 'node:path';

describe('scenarios a provider cannot run are skipped with the reason', () => {
  it('on the local provider: a Helm gateway (no chart), before anything is deployed', async () => {
    const scenarios = ['node-drain-http', 'gateway-delete-http'].map((id) => findScenario(id));
    const profiles = ['reference', 'envoy-gateway'].map((name) => findProfile(name));
    if (scenarios.some((s) => !s) || profiles.some((p) => !p)) throw new Error('catalog changed');
    const started = performance.now();
    const run = await runMatrix({
      provider: 'local',
      scenarios: scenarios.filter((s) => s !== undefined),
      profiles: profiles.filter((p): p is NonNullable<typeof p> => p !== undefined && p.name !== 'reference'),
      overrides: {},
      nightly: false,
      signal: AbortSignal.timeout(20_000),
    });
    const by = (id: string, profile: string) => run.scenarios.find((s) => s.id === id && s.profile === profile);
    // Without helm the requirement decides first; with it, the provider does.
    expect(by('gateway-delete-http', 'envoy-gateway')).toMatchObject({
      verdict: 'skipped',
      reason: expect.stringMatching(/helm not found on PATH|installed with its Helm chart: it runs only on a cluster provider/),
    });
    // The reference backend has no gateway; envoy-gateway no backend.
    expect(by('node-drain-http', 'envoy-gateway')?.verdict).toBe('skipped');
    expect(performance.now() - started).toBeLessThan(15_000);
  });
});

describe('a reference app that needs npm packages', () => {
  it('runs on clusters too: its bundle carries the packages to the stock Node image (kube/app-bundle.ts)', () => {
    const def = findScenario('backend-delete-grpc');
    const reference = findProfile('reference');
    if (!def || !reference) throw new Error('catalog changed');
    const scenario = def.build(reference, optionsFor(def, {}, false));
    const cluster = { name: 'kind', capabilities: { multiNode: true, udp: true, containerStopSignals: true } };
    expect(unsupported(scenario, cluster)).toBeUndefined();
    expect(unsupported(scenario, { ...cluster, name: 'local' })).toBeUndefined();
  });
});

describe('a program built into zerodrop\'s cache', () => {
  it('runs on the local provider only: on a cluster the pair is skipped with why, not run on an image without it', () => {
    const def = findScenario('gateway-delete-http');
    if (!def) throw new Error('catalog changed');
    const program = join(cacheDir(), 'caddy', 'v2.11.9-0123456789ab', 'caddy');
    const built = defineProfile({ name: 'built-gateway', description: 'a gateway run from a cached build', role: 'gateway', protocols: ['http'], directory: packageRoot, command: ['env', 'XDG_DATA_HOME=${POD_DIR}', program, 'run'] });
    const scenario = def.build(built, optionsFor(def, {}, false));
    const cluster = { name: 'kind', capabilities: { multiNode: true, udp: true, containerStopSignals: true } };
    expect(unsupported(scenario, cluster)).toBe(`the gateway workload runs ${program}, a build in zerodrop's cache on this machine, which no image carries: it runs on the local provider only`);
    expect(unsupported(scenario, { ...cluster, name: 'local' })).toBeUndefined();
  });
});

/** A provider whose pods live on nodes, with a drain that evicts the pods of the drained node (no process anywhere). */
function nodeProvider(): Provider & { drains: { node: string; opts: DrainNodeOptions }[] } {
  const pods: PodInfo[] = [
    { name: 'backend-1', workload: 'backend', ip: '10.0.0.1', phase: 'Running', ready: true, createdAt: 1, node: 'worker-a' },
    { name: 'backend-2', workload: 'backend', ip: '10.0.0.2', phase: 'Running', ready: true, createdAt: 2, node: 'worker-b' },
  ];
  const drains: { node: string; opts: DrainNodeOptions }[] = [];
  const unused = () => Promise.reject(new Error('not used here'));
  return {
    name: 'fake-nodes',
    capabilities: { multiNode: true, udp: true, nodeDrain: true },
    drains,
    deploy: async () => {},
    serviceAddress: () => ({ host: '127.0.0.1', port: 1 }),
    pods: (workload) => pods.filter((p) => p.workload === workload && p.phase !== 'Gone'),
    deletePod: unused,
    scale: unused,
    rolloutRestart: unused,
    waitForRollout: unused,
    drainNode: async (node, opts) => {
      drains.push({ node, opts });
      const evicted = pods.filter((p) => p.node === node);
      for (const p of evicted) p.phase = 'Terminating';
      setTimeout(() => {
        for (const p of evicted) p.phase = 'Gone';
      }, 30);
      return evicted.map((p) => p.name);
    },
    waitForPodGone: async (pod) => {
      while (pods.find((p) => p.name === pod)?.phase !== 'Gone') await new Promise((r) => setTimeout(r, 5));
    },
    teardown: async () => {},
    [Symbol.asyncDispose]: async () => {},
  };
}

describe('the restart-controller chaos step', () => {
  it("is skipped where the gateway has no controller to restart, with the reason, on any provider", () => {
    const def = findScenario('gateway-controller-restart-turn');
    const coturn = findProfile('coturn');
    const stunner = findProfile('stunner');
    if (!def || !coturn || !stunner) throw new Error('catalog changed');
    const scenario = (p: NonNullable<typeof coturn>) => def.build(p, optionsFor(def, {}, false));
    const kind = { name: 'kind', capabilities: { multiNode: true, udp: true, containerStopSignals: true } };
    expect(unsupported(scenario(coturn), kind)).toMatch(/the gateway workload has no controller to restart: only a chart profile that names its controller Deployment/);
    expect(unsupported(scenario(stunner), kind)).toBeUndefined();
    expect(unsupported(scenario(coturn), { ...kind, name: 'local' })).toMatch(/no controller to restart/);
  });
});

describe('the drain-node chaos step and its end condition', () => {
  it('drains the node of the oldest running pod of the workload, then ends once every evicted pod is gone', async () => {
    const provider = nodeProvider();
    const recorder = new Recorder();
    const scenario: Scenario = {
      id: 'drain-only',
      profile: 'reference',
      topology: { workloads: [], services: [] },
      loads: [],
      steps: [{ id: 'drain', when: { atMs: 0 }, action: { kind: 'drain-node', workload: 'backend', retryMs: 25, timeoutMs: 1000 } }],
      end: { nodeDrained: 'drain', settleMs: 0 },
      maxDurationMs: 5000,
      expectations: [],
    };
    const outcome = await runScenario(scenario, { provider, recorder, signal: AbortSignal.timeout(10_000) });
    expect(outcome.reason).toBeUndefined();
    expect(provider.drains).toEqual([{ node: 'worker-a', opts: { retryMs: 25, timeoutMs: 1000 } }]);
    const chaos = recorder.timeline.events.find((e) => e.kind === 'chaos');
    expect(chaos).toMatchObject({ workload: 'backend', message: 'drain node worker-a (hosting backend-1)', detail: { step: 'drain', node: 'worker-a' } });
    expect(recorder.timeline.events.find((e) => e.kind === 'note' && e.detail?.['drained'])).toMatchObject({ detail: { evicted: ['backend-1'] } });
    expect(provider.pods('backend').map((p) => p.name)).toEqual(['backend-2']);
  });

  it('refuses to drain where the provider may not', async () => {
    const provider = { ...nodeProvider(), capabilities: { multiNode: true, udp: true, nodeDrain: false } };
    const { runChaosAction } = await import('../chaos/actions.ts');
    await expect(runChaosAction(provider, new Recorder(), 'drain', { kind: 'drain-node', workload: 'backend', retryMs: 1, timeoutMs: 1 })).rejects.toThrow(/provider fake-nodes cannot drain nodes/);
  });
});
