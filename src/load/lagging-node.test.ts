import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaggingNodeSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { startLaggingNodeLoad } from './lagging-node.ts';

const spec: LaggingNodeSpec = { kind: 'lagging-node', service: 'gateway', workload: 'gateway', path: '/', rate: 50, windowMs: 300, timeoutMs: 1000 };
const servers: Server[] = [];

async function listen(): Promise<number> {
  const server = createServer((_req, res) => res.end('ok'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a lagging node', () => {
  it("sends new connections straight to each deleted pod of its workload for the window after its delete, each the pod's, refused ones included", async () => {
    const port = await listen();
    // gw-2 listens nowhere (a pod that stopped accepting): its requests are refused, and still its own.
    const addresses: Record<string, number> = { 'gw-1': port, 'gw-2': 1 };
    const recorder = new Recorder();
    const load = startLaggingNodeLoad('lagging-node', spec, { podAddress: (_s, pod) => (addresses[pod] ? { host: '127.0.0.1', port: addresses[pod] } : undefined) }, recorder, { signal: new AbortController().signal });
    recorder.event('delete-issued', { pod: 'other', workload: 'backend' });
    recorder.event('delete-issued', { pod: 'gw-1', workload: 'gateway' });
    await wait(100);
    recorder.event('delete-issued', { pod: 'gw-2', workload: 'gateway' });
    // A second delete of gw-1 (a shorter grace) starts nothing more.
    recorder.event('delete-issued', { pod: 'gw-1', workload: 'gateway' });
    await wait(600);
    const summary = await load.stop();
    const requests = [...recorder.timeline.requests];
    const byPod = (pod: string) => requests.filter((r) => r.pod === pod);
    // 300 ms at 50/s: about 15 each, and none after its window.
    expect(byPod('gw-1').length).toBeGreaterThanOrEqual(10);
    expect(byPod('gw-1').length).toBeLessThanOrEqual(16);
    expect(byPod('gw-1').every((r) => r.outcome === 'ok' && r.newConnection && r.load === 'lagging-node')).toBe(true);
    expect(byPod('gw-2').length).toBeGreaterThanOrEqual(10);
    expect(byPod('gw-2').every((r) => r.outcome === 'refused' && r.newConnection)).toBe(true);
    expect(requests.filter((r) => r.pod !== 'gw-1' && r.pod !== 'gw-2')).toEqual([]);
    expect(summary).toMatchObject({ load: 'lagging-node', sent: requests.length, completed: byPod('gw-1').length, failed: byPod('gw-2').length, late: 0 });
  });

  it('sends nothing where the harness cannot reach pods, and says so once', async () => {
    const recorder = new Recorder();
    const load = startLaggingNodeLoad('lagging-node', spec, { podAddress: () => undefined }, recorder, { signal: new AbortController().signal });
    recorder.event('delete-issued', { pod: 'gw-1', workload: 'gateway' });
    recorder.event('delete-issued', { pod: 'gw-2', workload: 'gateway' });
    await wait(50);
    expect(await load.stop()).toMatchObject({ sent: 0, failed: 0 });
    expect(recorder.timeline.events.filter((e) => e.kind === 'note').map((e) => e.message)).toEqual([
      'load lagging-node: the harness cannot reach the pods of gateway directly here, so no lagging node sends to a deleted one',
    ]);
  });
});
