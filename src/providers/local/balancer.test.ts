// The local Service load balancer with real pods and sockets: programming delay, pinning,
// terminating fallback, resets, the never-deprogram fault, and teardown.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { eventsOf, firstEvent } from '../../model/timeline.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { BalancerFault } from './balancer.ts';
import type { LocalProvider } from './local-provider.ts';
import { alive, dial, newProvider, podLine, refuses, roundTrip, sleep, tcpService, tcpWorkload, whoServes } from '../../../test-support/local-provider.ts';

let current: LocalProvider | undefined;
afterEach(async () => {
  await current?.teardown();
  current = undefined;
});

function setup(fault?: BalancerFault): { provider: LocalProvider; recorder: Recorder } {
  const made = newProvider(fault);
  current = made.provider;
  return made;
}

/** Long enough that four connections on a busy machine still fall within it. */
const PROGRAMMING_DELAY_MS = 800;

describe('service load balancer', () => {
  it('keeps routing new connections to a deleted pod until the programming delay has passed, then never again', async () => {
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [tcpWorkload('web', { replicas: 2, preStop: { sleep: { seconds: 2 } }, terminationGracePeriodSeconds: 3 })],
        services: [tcpService('web', 'web', PROGRAMMING_DELAY_MS)],
      },
      { timeoutMs: 10_000 },
    );
    const address = provider.serviceAddress('web');
    const [a, b] = provider.pods('web').map((p) => p.name);
    // Round robin over the two ready endpoints.
    const warm = [await whoServes(address), await whoServes(address)];
    expect(warm.sort()).toEqual([a, b].sort());

    // A connection established before the delete stays pinned to its pod throughout.
    let pinned: { pod: string; socket: import('node:net').Socket } | undefined;
    for (let i = 0; i < 2 && !pinned; i++) {
      const d = await dial(address);
      if ('pod' in d && d.pod === a) pinned = d;
      else if ('pod' in d) d.socket.end();
    }
    expect(pinned).toBeDefined();

    await provider.deletePod(a!);
    const deleted = firstEvent(recorder.timeline, 'delete-issued', a)!.t;
    // Within the delay the balancer's view is stale: the deleted pod still gets new connections.
    const during = [await whoServes(address), await whoServes(address), await whoServes(address), await whoServes(address)];
    // The four connections fell inside the stale window (a machine slow enough to miss it would make `during` meaningless).
    expect(recorder.now() - deleted).toBeLessThan(PROGRAMMING_DELAY_MS - 100);
    expect(during).toContain(a);

    const deprogrammed = await recorder.waitFor((e) => e.kind === 'lb-deprogrammed' && e.pod === a, {
      timeoutMs: 2_000,
      what: 'deprogram',
    });
    // Never early (a few ms of timer rounding aside), and not much late.
    expect(deprogrammed.t - deleted).toBeGreaterThanOrEqual(PROGRAMMING_DELAY_MS - 5);
    expect(deprogrammed.t - deleted).toBeLessThan(PROGRAMMING_DELAY_MS + 200);
    expect(deprogrammed.service).toBe('web');
    // No spread: every node applies the change at the delay, and the event says so.
    expect(deprogrammed.detail).toMatchObject({ reason: 'not-ready', nodeLagsMs: { 'local-node-1': PROGRAMMING_DELAY_MS, 'local-node-2': PROGRAMMING_DELAY_MS } });

    const after: string[] = [];
    for (let i = 0; i < 8; i++) after.push(await whoServes(address));
    expect(after).not.toContain(a);
    expect(after.every((p) => !p.startsWith('error:'))).toBe(true);
    const routedAfter = recorder.timeline.connections.filter((c) => c.open > deprogrammed.t);
    expect(routedAfter.length).toBeGreaterThanOrEqual(8);
    expect(routedAfter.some((c) => c.pod === a)).toBe(false);

    // The pinned connection still reaches the draining pod.
    expect(await roundTrip(pinned!.socket, 'still-there')).toBe('still-there');
    const record = recorder.timeline.connections.find((c) => c.clientPort === pinned!.socket.localPort);
    expect(record?.pod).toBe(a);
    pinned!.socket.end();
    await recorder.waitFor((e) => e.kind === 'pod-removed' && e.pod === a, { timeoutMs: 5_000, what: 'gone' });
    await sleep(50);
    expect(record?.upstream).toBe('ok');
    expect(record?.close).toBeGreaterThan(deprogrammed.t);
    expect(record?.bytesIn).toBe('still-there'.length);
    expect(record?.bytesOut).toBe(`${a}\n`.length + 'still-there'.length);
  });

  it('deprograms a pod node by node at seeded lags within the spread, routing by each node meanwhile, and the seed replays the lags', async () => {
    const SPREAD_MS = 2000;
    const once = async () => {
      const made = newProvider(undefined, 4);
      current = made.provider;
      const { provider, recorder } = made;
      await provider.deploy(
        {
          workloads: [tcpWorkload('web', { replicas: 2, preStop: { sleep: { seconds: 4 } }, terminationGracePeriodSeconds: 5 })],
          services: [{ ...tcpService('web', 'web', 100), programmingSpreadMs: SPREAD_MS }],
        },
        { timeoutMs: 10_000 },
      );
      const address = provider.serviceAddress('web');
      const [a] = provider.pods('web').map((p) => p.name);
      // The deploy waited for every node to program the pods: no connection finds a node without them.
      const warm: string[] = [];
      for (let i = 0; i < 6; i++) warm.push(await whoServes(address));
      expect(warm.filter((p) => p.startsWith('error:'))).toEqual([]);
      await provider.deletePod(a!);
      const deleted = firstEvent(recorder.timeline, 'delete-issued', a)!.t;
      // New connections one after another until the last node has deprogrammed the pod (bounded).
      while (!firstEvent(recorder.timeline, 'lb-deprogrammed', a) && recorder.now() - deleted < 100 + SPREAD_MS + 1000) await whoServes(address);
      const deprogrammed = firstEvent(recorder.timeline, 'lb-deprogrammed', a)!;
      const lags = deprogrammed.detail?.['nodeLagsMs'] as Record<string, number>;
      const [first, last] = Object.values(lags).sort((x, y) => x - y) as [number, number];
      // The event comes when the last node applied the change, not at the delay.
      expect(first).toBeGreaterThanOrEqual(100);
      expect(last).toBeLessThan(100 + SPREAD_MS);
      expect(deprogrammed.t - deleted).toBeGreaterThanOrEqual(last - 5);
      expect(deprogrammed.t - deleted).toBeLessThan(100 + SPREAD_MS + 200);
      expect(deprogrammed.detail?.['seed']).toEqual(expect.any(Number));
      // Between the first node's and the last node's apply, connections through the node that still
      // has the pod may reach it, those through the other never: some reach it, not all.
      const between = recorder.timeline.connections.filter((c) => c.open > deleted + first + 20 && c.open < deleted + last - 20);
      const routed = { total: between.length, toDeleted: between.filter((c) => c.pod === a).length };
      await provider.teardown();
      current = undefined;
      return { lags, routed };
    };
    const one = await once();
    const two = await once();
    expect(two.lags).toEqual(one.lags);
    // Seed 4 puts the nodes' lags far apart (the same on every machine): the window holds connections.
    expect(Math.abs(Object.values(one.lags)[0]! - Object.values(one.lags)[1]!)).toBeGreaterThan(400);
    for (const { routed } of [one, two]) {
      expect(routed.total).toBeGreaterThanOrEqual(6);
      expect(routed.toDeleted).toBeGreaterThan(0);
      expect(routed.toDeleted).toBeLessThan(routed.total);
    }
  });

  it('falls back to serving terminating endpoints when none is ready, then resets clients when none is left', async () => {
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        // No readiness probe: a probe meeting the port closed by the exit, before the harness has
        // handled the exit itself, would take it out of service first (see the deletion sequence test).
        workloads: [tcpWorkload('solo', { preStop: { sleep: { seconds: 0.6 } }, terminationGracePeriodSeconds: 2, readinessProbe: undefined })],
        services: [tcpService('solo', 'solo')],
      },
      { timeoutMs: 10_000 },
    );
    const address = provider.serviceAddress('solo');
    const name = provider.pods('solo')[0]!.name;
    // Ready at once without a probe: it serves once its program listens.
    await podLine(recorder, name, (line) => line === 'listening');
    await provider.scale('solo', 0);
    expect(firstEvent(recorder.timeline, 'delete-issued', name)).toBeDefined();
    // No ready endpoint: the terminating, still serving pod keeps taking new connections (KEP-1669).
    expect(await whoServes(address)).toBe(name);
    expect(firstEvent(recorder.timeline, 'lb-deprogrammed', name)).toBeUndefined();
    await provider.waitForPodGone(name, { timeoutMs: 5_000 });
    // It stops being eligible when its container exits (serving:false), before it is removed.
    expect(firstEvent(recorder.timeline, 'lb-deprogrammed', name)?.detail).toMatchObject({ reason: 'not-serving' });
    expect(firstEvent(recorder.timeline, 'lb-deprogrammed', name)!.t).toBeGreaterThanOrEqual(firstEvent(recorder.timeline, 'exit', name)!.t);
    const result = await dial(address);
    expect(result).toEqual({ error: 'ECONNRESET' });
    await sleep(20);
    expect(recorder.timeline.connections.at(-1)).toMatchObject({ upstream: 'no-endpoint', service: 'solo' });
    expect(recorder.timeline.connections.at(-1)?.pod).toBeUndefined();
  });

  it('resets the client when the pod refuses the connection, and never retries another endpoint', async () => {
    const { provider, recorder } = setup();
    // The Service targets a port nothing listens on; readiness probes the real one.
    await provider.deploy(
      { workloads: [tcpWorkload('web', { replicas: 2 })], services: [tcpService('web', 'web', 0, 9001)] },
      { timeoutMs: 10_000 },
    );
    const address = provider.serviceAddress('web');
    const results = [await dial(address), await dial(address)];
    expect(results).toEqual([{ error: 'ECONNRESET' }, { error: 'ECONNRESET' }]);
    await sleep(20);
    expect(recorder.timeline.connections.map((c) => c.upstream)).toEqual(['refused', 'refused']);
    expect(recorder.timeline.connections.map((c) => c.pod).sort()).toEqual(['web-1', 'web-2']);
  });

  it("'never-deprogram' fault keeps sending new connections to a deleted pod", async () => {
    const { provider, recorder } = setup('never-deprogram');
    await provider.deploy(
      { workloads: [tcpWorkload('web', { replicas: 2, terminationGracePeriodSeconds: 1 })], services: [tcpService('web', 'web')] },
      { timeoutMs: 10_000 },
    );
    const address = provider.serviceAddress('web');
    await provider.deletePod('web-1');
    await provider.waitForPodGone('web-1', { timeoutMs: 5_000 });
    await recorder.waitFor((e) => e.kind === 'lb-programmed' && e.pod === 'web-3', { timeoutMs: 5_000, what: 'replacement' });
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push(await whoServes(address));
    expect(seen).toContain('error:ECONNRESET');
    await sleep(20);
    const toDead = recorder.timeline.connections.filter((c) => c.pod === 'web-1' && c.open > firstEvent(recorder.timeline, 'pod-removed', 'web-1')!.t);
    expect(toDead.length).toBeGreaterThanOrEqual(1);
    expect(toDead.every((c) => c.upstream === 'refused')).toBe(true);
    // It reports the deprogramming on time, and keeps routing anyway: the lie the assertion must see through.
    const deprogrammed = firstEvent(recorder.timeline, 'lb-deprogrammed', 'web-1');
    expect(deprogrammed).toBeDefined();
    expect(toDead.every((c) => c.open > deprogrammed!.t)).toBe(true);
  });
});

describe('teardown', () => {
  it('kills every process group (preStop hooks included) and closes every listener', async () => {
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [
          tcpWorkload('web', {
            replicas: 2,
            env: { ON_SIGTERM: 'ignore', GRANDCHILD: '1' },
            preStop: { exec: { command: ['node', '-e', 'console.log("hook " + process.pid); setInterval(() => {}, 1000)'] } },
            terminationGracePeriodSeconds: 30,
          }),
        ],
        services: [tcpService('web', 'web')],
      },
      { timeoutMs: 10_000 },
    );
    const address = provider.serviceAddress('web');
    const podIps = provider.pods('web').map((p) => p.ip);
    await provider.deletePod('web-1');
    await recorder.waitFor((e) => e.kind === 'lb-programmed' && e.pod === 'web-3', { timeoutMs: 5_000, what: 'web-3' });
    await podLine(recorder, 'web-1', (line) => line.startsWith('hook '));
    const pids = [
      ...eventsOf(recorder.timeline, 'pod-started').map((e) => e.detail?.pid as number),
      ...Object.values(recorder.timeline.podOutput)
        .flat()
        .filter((l) => /^(grandchild|hook) \d+$/.test(l.line))
        .map((l) => Number(l.line.split(' ')[1])),
    ];
    expect(pids).toHaveLength(3 + 3 + 1);
    expect(pids.every(alive)).toBe(true);

    const started = performance.now();
    await provider.teardown();
    expect(performance.now() - started).toBeLessThan(2_000);
    await provider.teardown(); // idempotent
    expect(pids.filter(alive)).toEqual([]);
    expect(await refuses(address.host, address.port)).toBe(true);
    for (const ip of podIps) expect(await refuses(ip, 9000)).toBe(true);
    await expect(provider.deletePod('web-2')).rejects.toThrow(/torn down/);
  });

  it('leaves nothing that keeps the event loop alive', async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const script = `
      import { Recorder } from ${JSON.stringify(path.join(here, '../../observe/recorder.ts'))};
      import { LocalProvider } from ${JSON.stringify(path.join(here, 'local-provider.ts'))};
      import { tcpService, tcpWorkload } from ${JSON.stringify(path.join(here, '../../../test-support/local-provider.ts'))};
      const provider = new LocalProvider({ recorder: new Recorder(), runId: 'loop', cwd: process.cwd() });
      await provider.deploy({ workloads: [tcpWorkload('web', { replicas: 2, preStop: { sleep: { seconds: 30 } } })], services: [tcpService('web', 'web')] }, { timeoutMs: 10000 });
      await provider.deletePod('web-1');
      await provider.teardown();
      console.log('done');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let doneAt = Infinity;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('done')) doneAt = Math.min(doneAt, performance.now());
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running 8 s after start');
      }, 8_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c ?? -1);
      });
    });
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: 'done' });
    // Pending preStop and grace timers (30 s) would have kept it running.
    expect(performance.now() - doneAt).toBeLessThan(1_000);
  });
});
