// The zerodrop node agent: what the kubelet does for the pods of one node, for clusters whose
// nodes and pods are Linux network namespaces (no container runtime). Run by the cluster as
//   nsenter --net=/run/netns/NODE -- node main.ts CONFIG.json
// It registers the Node and keeps it alive (node-registration.ts), runs the pods bound to the node
// (pod-worker.ts), serves their logs on :10250 (log-server.ts), and on SIGTERM kills every pod
// process it started, removes every pod netns and veth it created, and exits 0.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { KubeConfig } from '@kubernetes/client-node';

import { KubeClient, PATCH } from '../../kube/client.ts';
import { ListWatch } from '../../kube/list-watch.ts';
import { apiObjects } from './api-objects.ts';
import { loadConfig, type NodeAgentConfig } from './config.ts';
import { nowNanos } from './container-log.ts';
import { kubeEvents } from './events.ts';
import { IpPool } from './ip-pool.ts';
import { startLogServer } from './log-server.ts';
import { NodeRegistration } from './node-registration.ts';
import { PodWorker } from './pod-worker.ts';
import { podKey, type Pod } from './pod-types.ts';
import { hostTopLevel } from './rootfs-script.ts';
import { sysctlRejection } from './sysctls.ts';
import { realClock } from './termination.ts';

function log(message: string): void {
  process.stdout.write(`${new Date().toISOString()} ${message}\n`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/** Retries `fn` every second until it succeeds or the agent stops (the API server may start later). */
async function retry<T>(what: string, fn: () => Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt % 10 === 0) log(`${what} failed (retrying): ${(err as Error).message}`);
      await sleep(1_000, signal);
    }
  }
  return undefined;
}

export async function runAgent(config: NodeAgentConfig): Promise<void> {
  const stop = new AbortController();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(config.kubeconfig);
  const client = new KubeClient(kubeConfig);
  mkdirSync(config.dir, { recursive: true });
  const podsDir = path.join(config.dir, 'pods');
  const workers = new Map<string, PodWorker>();
  const ips = new IpPool(config.podCIDR);
  const events = kubeEvents(client, config.nodeName, log);
  const objects = apiObjects(client);
  const top = hostTopLevel();
  const kubeletMinor = /^v?(\d+\.\d+)/.exec(config.kubeletVersion)?.[1] ?? '1.0';

  const byName = (namespace: string, name: string) => [...workers.values()].find((w) => w.pod.metadata.name === name && (w.pod.metadata.namespace ?? 'default') === namespace);

  const newWorker = (pod: Pod) => {
    const worker = new PodWorker(pod, {
      client,
      objects,
      events,
      clock: realClock,
      ips,
      clusterId: config.clusterId,
      nodeName: config.nodeName,
      nodeIP: config.nodeIP,
      nodeExecPath: config.nodeExecPath,
      goPrograms: config.goPrograms ?? {},
      kubeletMinor,
      dir: config.dir,
      top,
      log,
      finished: (w) => {
        if (workers.get(w.uid) === w) workers.delete(w.uid);
        log(`pod ${w.key} (${w.uid}) done`);
      },
    });
    workers.set(worker.uid, worker);
    log(`pod ${worker.key} (${worker.uid}) starting`);
    worker.start();
  };

  /** What the kubelet does to a pod it does not admit (kubelet.go, rejectPod): a Warning event, and phase Failed with the reason. */
  const rejected = new Set<string>();
  const rejectPod = async (pod: Pod, { reason, message }: { reason: string; message: string }) => {
    log(`pod ${podKey(pod)} rejected: ${message}`);
    events.emit(pod, undefined, 'Warning', reason, message);
    await client
      .request('PATCH', `/api/v1/namespaces/${pod.metadata.namespace ?? 'default'}/pods/${pod.metadata.name}/status`, {
        body: { metadata: { uid: pod.metadata.uid }, status: { phase: 'Failed', reason, message: `Pod was rejected: ${message}` } },
        contentType: PATCH.merge,
        allow: [404, 409],
      })
      .catch((err: unknown) => log(`status of rejected ${pod.metadata.name} failed: ${(err as Error).message}`));
  };

  const onPod = (type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod) => {
    const uid = pod.metadata.uid;
    if (!uid) return;
    const worker = workers.get(uid);
    if (type === 'DELETED') {
      rejected.delete(uid);
      worker?.vanished();
      return;
    }
    if (worker) {
      worker.update(pod);
      return;
    }
    // Another pod of the same name (a recreated StatefulSet pod): the old one is gone.
    const sameName = byName(pod.metadata.namespace ?? 'default', pod.metadata.name);
    if (sameName && sameName.uid !== uid) sameName.vanished();
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      // Finished before this agent: nothing runs; a deleted one is removed, as the kubelet does.
      if (pod.metadata.deletionTimestamp) {
        void client
          .request('DELETE', `/api/v1/namespaces/${pod.metadata.namespace ?? 'default'}/pods/${pod.metadata.name}`, {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
            allow: [404, 409],
          })
          .catch((err: unknown) => log(`delete of ${pod.metadata.name} failed: ${(err as Error).message}`));
      }
      return;
    }
    const rejection = sysctlRejection(pod, kubeletMinor);
    if (rejection) {
      if (!rejected.has(uid)) {
        rejected.add(uid);
        void rejectPod(pod, rejection);
      }
      return;
    }
    newWorker(pod);
  };

  const registration = new NodeRegistration(client, config, log);
  await retry('node registration', () => registration.register(), stop.signal);
  registration.start();

  const server = await startLogServer({
    host: config.nodeIP,
    port: 10250,
    caFile: config.caFile,
    certFile: config.servingCertFile,
    keyFile: config.servingKeyFile,
    now: nowNanos,
    lookup: (namespace, podName, containerName) => {
      const worker = byName(namespace, podName);
      if (!worker) return `pod "${podName}" in namespace "${namespace}" not found on node ${config.nodeName}`;
      const container = worker.container(containerName);
      if (!container) return `container "${containerName}" is not valid for pod "${podName}"`;
      return container.log;
    },
  });
  log(`serving on https://${config.nodeIP}:10250`);

  const watch = new ListWatch<Pod & { metadata: { name: string } }>({
    client,
    path: `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${config.nodeName}`)}`,
    signal: stop.signal,
    onChange: (change) => {
      try {
        onPod(change.type, change.object);
      } catch (err) {
        log(`pod ${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}: ${(err as Error).message}`);
      }
    },
    onGap: (what) => log(what),
  });
  await retry('pod list', () => watch.start(), stop.signal);
  if (config.ready) writeFileSync(config.ready, `${process.pid}\n`);
  log(`node ${config.nodeName} ready`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping ${workers.size} pod(s)`);
    stop.abort();
    registration.stop();
    server.close();
    server.closeAllConnections();
    await Promise.all([...workers.values()].map((w) => w.shutdown().catch((err: unknown) => log(`shutdown of ${w.key}: ${(err as Error).message}`))));
    rmSync(podsDir, { recursive: true, force: true });
    log('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// The agent keeps its pods running through a bug in one of them: a kubelet does not take down its
// node's pods because one pod's sync failed.
process.on('unhandledRejection', (err) => log(`unhandled: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`));
process.on('uncaughtException', (err) => log(`uncaught: ${err.stack ?? err.message}`));

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('node-agent/main.ts')) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node main.ts CONFIG.json\n');
    process.exit(2);
  }
  runAgent(loadConfig(file)).catch((err: unknown) => {
    log(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
}
