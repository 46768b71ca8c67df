// The local Service load balancer for UDP, with reference UDP echo pods: a flow stays on its pod,
// including while the pod terminates and serves; kube-proxy's conntrack cleanup moves it once the
// endpoint stops serving; idle flows expire; datagrams with no endpoint are dropped and recorded.

import dgram from 'node:dgram';

import { afterEach, describe, expect, it } from 'vitest';

import { packetAsker } from '../../load/udp-ask.ts';
import type { Service } from '../../model/workload.ts';
import { udpEchoTopology } from '../../runner/udp-soak.ts';
import type { ServiceAddress } from '../provider.ts';
import type { LocalProvider } from './local-provider.ts';
import { newProvider, sleep } from '../../../test-support/local-provider.ts';

let current: LocalProvider | undefined;
const sockets: dgram.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  await current?.teardown();
  current = undefined;
});

/** A client flow: one socket; `ask` sends a packet and resolves with the pod that echoed it, or undefined after `timeoutMs`. */
async function client(address: ServiceAddress) {
  const socket = dgram.createSocket('udp4');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const asker = packetAsker(socket, address, { token: 1 });
  return {
    port: socket.address().port,
    ask: (timeoutMs = 500) => asker(timeoutMs),
  };
}

async function deploy(replicas: number, service: Partial<Service> = {}, preStopSeconds = 0) {
  const made = newProvider();
  current = made.provider;
  const topology = udpEchoTopology(replicas);
  const [workload] = topology.workloads;
  const [svc] = topology.services;
  if (preStopSeconds > 0 && workload) {
    workload.preStop = { sleep: { seconds: preStopSeconds } };
    workload.terminationGracePeriodSeconds = preStopSeconds + 3;
    workload.env['DRAIN_IDLE_MS'] = '300';
  }
  if (svc) Object.assign(svc, service);
  await made.provider.deploy(topology, { timeoutMs: 15_000 });
  return { ...made, address: made.provider.serviceAddress('echo', 'udp') };
}

describe('UDP service load balancer', () => {
  it('pins a flow to the pod of its first datagram and spreads new flows', async () => {
    const { address, recorder } = await deploy(2);
    const a = await client(address);
    const b = await client(address);
    const first = await a.ask();
    const second = await b.ask();
    expect(first).toMatch(/^echo-/);
    expect(second).toMatch(/^echo-/);
    expect(second).not.toBe(first);
    for (let i = 0; i < 5; i++) expect(await a.ask()).toBe(first);
    const flows = recorder.timeline.udpFlows ?? [];
    expect(flows).toHaveLength(2);
    expect(flows[0]).toMatchObject({ service: 'echo', clientPort: a.port, pod: first, end: 'open', packetsIn: 6, packetsOut: 6 });
  });

  it('keeps a flow on its terminating, serving pod; moves it once the endpoint is gone (conntrack cleanup)', async () => {
    const { provider, address, recorder } = await deploy(2, {}, 1);
    const a = await client(address);
    const pinned = (await a.ask())!;
    await provider.deletePod(pinned);
    // Terminating and serving: the established flow stays; a new flow goes to the ready pod.
    for (let i = 0; i < 3; i++) expect(await a.ask()).toBe(pinned);
    const other = await (await client(address)).ask();
    expect(other).not.toBe(pinned);
    await provider.waitForPodGone(pinned, { timeoutMs: 10_000 });
    // The entry was flushed when the endpoint stopped serving: the next datagram is a new flow.
    expect(await a.ask()).toBe(other);
    const mine = (recorder.timeline.udpFlows ?? []).filter((f) => f.clientPort === a.port);
    expect(mine.map((f) => [f.pod, f.end])).toEqual([
      [pinned, 'endpoint-flushed'],
      [other, 'open'],
    ]);
  });

  it('expires idle flows after the conntrack timeout', async () => {
    const { address, recorder } = await deploy(1, { udpTimeouts: { unrepliedMs: 100, streamMs: 200 } });
    const a = await client(address);
    expect(await a.ask()).toBe('echo-1');
    await sleep(450);
    expect(await a.ask()).toBe('echo-1');
    const mine = (recorder.timeline.udpFlows ?? []).filter((f) => f.clientPort === a.port);
    expect(mine.map((f) => f.end)).toEqual(['idle-timeout', 'open']);
    expect(mine[0]!.close! - mine[0]!.last).toBeGreaterThanOrEqual(150);
  });

  it('drops datagrams while the Service has no endpoint, recorded as a no-endpoint flow', async () => {
    const { provider, address, recorder } = await deploy(1);
    await provider.scale('echo', 0);
    await provider.waitForPodGone('echo-1', { timeoutMs: 10_000 });
    const a = await client(address);
    expect(await a.ask(200)).toBeUndefined();
    expect(await a.ask(200)).toBeUndefined();
    const mine = (recorder.timeline.udpFlows ?? []).filter((f) => f.clientPort === a.port);
    expect(mine).toEqual([expect.objectContaining({ end: 'open', packetsIn: 2, packetsOut: 0 })]);
    expect(mine[0]!.pod).toBeUndefined();
  });
});
