// The UDP ladder through the kernel's Service path: the reference UDP echo as a pod of a netns
// cluster (real kube-proxy, nftables mode), reached at its NodePort from the host. The same ladder
// and generator as the direct and local-balancer rows (udp-bench.ts), so the three compare: what the
// local provider's userspace balancer costs, and what a real node's costs.

import dgram from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sourceAddressFor } from '../load/source-address.ts';
import { startUdpLoad } from '../load/udp.ts';
import { Recorder } from '../observe/recorder.ts';
import { packageRoot } from '../paths.ts';
import { serverSideApply } from '../providers/kube/apply.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { FIXTURES_MOUNT, NODE_IMAGE } from '../providers/kube/manifests.ts';
import { KUBE_PROXY_PROGRAMMING_BOUND_MS } from '../providers/kube/observers.ts';
import type { KubeObject } from '../providers/kube/list-watch.ts';
import { startNetnsCluster } from '../providers/netns/cluster.ts';
import { netnsMissing } from '../providers/netns/prerequisites.ts';
import { climb, type Ladder, type LadderStep } from './udp-bench.ts';

const NAMESPACE = 'zerodrop-bench';
const NODE_PORT = 30_040;
const ECHO_PORT = 9001;

/** Why the bench's netns rows (this ladder, the scale section's gateway run) cannot run here, or undefined. */
export async function netnsBenchMissing(): Promise<string | undefined> {
  const missing = await netnsMissing();
  return missing.length > 0 ? missing.join('; ') : undefined;
}

function echoObjects(files: Record<string, string>): KubeObject[] {
  const meta = (name: string) => ({ name, namespace: NAMESPACE });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('echo'), data: files },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('echo'),
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'echo' } },
        template: {
          metadata: { labels: { app: 'echo' } },
          spec: {
            containers: [
              {
                name: 'echo',
                image: NODE_IMAGE,
                command: ['node', `${FIXTURES_MOUNT}/reference-udp-echo.mjs`],
                env: [
                  { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  { name: 'PORT', value: String(ECHO_PORT) },
                ],
                readinessProbe: { httpGet: { port: 8086, path: '/healthz' }, periodSeconds: 1 },
                volumeMounts: [{ name: 'fixtures', mountPath: FIXTURES_MOUNT }],
              },
            ],
            volumes: [{ name: 'fixtures', configMap: { name: 'echo' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('echo'),
      spec: { type: 'NodePort', selector: { app: 'echo' }, ports: [{ name: 'udp', protocol: 'UDP', port: ECHO_PORT, targetPort: ECHO_PORT, nodePort: NODE_PORT }] },
    },
  ];
}

async function echoed(target: { host: string; port: number }, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    signal.throwIfAborted();
    // A fresh socket (a fresh source port) each try: the try before may have left a stale entry.
    const socket = dgram.createSocket('udp4');
    const answered = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 500);
      socket.once('message', () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.once('error', () => undefined);
      socket.bind({ address: sourceAddressFor(target.host), port: 0 }, () => socket.send('zerodrop-probe', target.port, target.host));
    });
    socket.close();
    if (answered) return;
    await sleep(250, undefined, { signal });
  }
  throw new Error(`the echo's NodePort ${target.host}:${target.port} did not answer within 30 s`);
}

/** Climbs `rates` against the echo behind a NodePort of a fresh netns cluster, which it removes after. */
export async function netnsUdpLadder(o: { flows: number; payloadBytes: number; stepMs: number; rates: readonly number[]; signal: AbortSignal; log: (line: string) => void }): Promise<Ladder> {
  await using cluster = await startNetnsCluster({ nodes: 1, log: o.log, signal: o.signal });
  const client = new KubeClient(cluster.kubeConfig());
  const files: Record<string, string> = {};
  for (const name of ['reference-udp-echo.mjs', 'pod-env.mjs']) files[name] = await readFile(join(packageRoot, 'fixtures', name), 'utf8');
  for (const object of echoObjects(files)) await serverSideApply(client, object, o.signal);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { body } = await client.request<{ endpoints?: { conditions?: { ready?: boolean } }[] }[] | { items: { endpoints?: { conditions?: { ready?: boolean } }[] }[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${NAMESPACE}/endpointslices`);
    const items = 'items' in body ? body.items : [];
    if (items.some((s) => s.endpoints?.some((e) => e.conditions?.ready))) break;
    if (Date.now() > deadline) throw new Error('the echo pod was not ready within 120 s');
    await sleep(250, undefined, { signal: o.signal });
  }
  const target = { host: cluster.nodes[0]!.ip, port: NODE_PORT };
  // kube-proxy programs the NodePort some time after the endpoint is ready. A flow started before
  // then keeps the conntrack entry of its first, unanswered datagram and loses everything: the
  // ladder starts once a plain datagram (the echo returns it unchanged) comes back.
  await echoed(target, o.signal);
  // Then kube-proxy's bound for the rest of that change (KUBE_PROXY_PROGRAMMING_BOUND_MS): a ladder
  // started the moment the probe came back lost a whole first step now and then, flows that a
  // moment later were fine.
  await sleep(KUBE_PROXY_PROGRAMMING_BOUND_MS, undefined, { signal: o.signal });
  const ladder = await climb(
    o.rates,
    async (rate): Promise<LadderStep> => {
      const load = startUdpLoad('bench', { kind: 'udp', service: 'echo', flows: o.flows, ratePerFlow: rate / o.flows, durationMs: o.stepMs, payloadBytes: o.payloadBytes, replyTimeoutMs: 1000 }, target, new Recorder(), { signal: o.signal });
      const s = await load.done;
      const step: LadderStep = { rate, sent: s.sent, lost: s.lost, held: (s.achievedRate ?? 0) / rate };
      if (s.socketDrops !== undefined) step.socketDrops = s.socketDrops;
      return step;
    },
    o.signal,
  );
  return ladder;
}
