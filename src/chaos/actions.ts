// Chaos steps act on the provider through its interface only, and write a `chaos` event first so
// that the Timeline shows the action at the moment it was issued, before anything it caused.

import type { ChaosAction } from '../model/scenario.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { PodInfo, Provider } from '../providers/provider.ts';

function pickPod(pods: PodInfo[], pick: 'oldest' | 'newest'): PodInfo | undefined {
  // Only running pods are candidates: deleting a pod that is already terminating tests nothing.
  const live = pods.filter((p) => p.phase === 'Running');
  return pick === 'oldest' ? live[0] : live.at(-1);
}

export async function runChaosAction(provider: Provider, recorder: Recorder, stepId: string, action: ChaosAction): Promise<void> {
  switch (action.kind) {
    case 'delete-pod': {
      const pod = pickPod(provider.pods(action.workload), action.pick);
      if (!pod) throw new Error(`chaos step ${stepId}: workload ${action.workload} has no running pod to delete`);
      const grace = action.gracePeriodSeconds;
      recorder.event('chaos', {
        pod: pod.name,
        workload: action.workload,
        message: grace === 0 ? `force delete ${pod.name} (grace 0)` : `delete ${pod.name}`,
        detail: { step: stepId, action: action.kind, ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}) },
      });
      await provider.deletePod(pod.name, grace !== undefined ? { gracePeriodSeconds: grace } : {});
      return;
    }
    case 'scale': {
      recorder.event('chaos', {
        workload: action.workload,
        message: `scale ${action.workload} to ${action.replicas}`,
        detail: { step: stepId, action: action.kind, replicas: action.replicas },
      });
      await provider.scale(action.workload, action.replicas);
      return;
    }
    case 'drain-node': {
      const pod = pickPod(provider.pods(action.workload), 'oldest');
      if (!pod?.node) throw new Error(`chaos step ${stepId}: workload ${action.workload} has no running pod on a known node`);
      if (!provider.drainNode || !provider.capabilities.nodeDrain) throw new Error(`chaos step ${stepId}: provider ${provider.name} cannot drain nodes`);
      recorder.event('chaos', {
        workload: action.workload,
        message: `drain node ${pod.node} (hosting ${pod.name})`,
        detail: { step: stepId, action: action.kind, node: pod.node },
      });
      const evicted = await provider.drainNode(pod.node, { retryMs: action.retryMs, timeoutMs: action.timeoutMs });
      // The end condition `nodeDrained` waits for exactly these pods to be gone.
      recorder.event('note', {
        workload: action.workload,
        message: `node ${pod.node} drained: evicted ${evicted.join(', ') || 'nothing'}`,
        detail: { step: stepId, drained: pod.node, evicted },
      });
      return;
    }
    case 'restart-controller': {
      if (!provider.restartController) throw new Error(`chaos step ${stepId}: provider ${provider.name} runs no controller to restart`);
      recorder.event('chaos', {
        workload: action.workload,
        message: `rollout restart the controller of ${action.workload}`,
        detail: { step: stepId, action: action.kind },
      });
      await provider.restartController(action.workload);
      return;
    }
    case 'reload-pod': {
      const pods = action.pick === 'all' ? provider.pods(action.workload).filter((p) => p.phase === 'Running') : [pickPod(provider.pods(action.workload), action.pick)].filter((p) => p !== undefined);
      if (pods.length === 0) throw new Error(`chaos step ${stepId}: workload ${action.workload} has no running pod to reload`);
      if (!provider.reloadPod) throw new Error(`chaos step ${stepId}: provider ${provider.name} cannot reload a pod's configuration`);
      const env = action.env ?? {};
      const changes = Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ');
      for (const pod of pods) {
        recorder.event('chaos', {
          pod: pod.name,
          workload: action.workload,
          message: `reload ${pod.name}${changes ? ` with ${changes}` : ''}`,
          detail: { step: stepId, action: action.kind, ...(action.env ? { env } : {}) },
        });
      }
      // Every pod at once, as a controller applying a changed ConfigMap to each replica would.
      await Promise.all(pods.map((pod) => provider.reloadPod!(pod.name, { env })));
      return;
    }
    case 'move-route': {
      const how = provider.capabilities.routeChanges;
      if (how === 'reload') {
        if (action.recreate) throw new Error(`chaos step ${stepId}: provider ${provider.name} moves a route by reloading the gateway's configuration; it has no route object to delete and create again`);
        // The gateway's templates name the route's Service by its variables, as a pod sees every
        // Service of its namespace (https://kubernetes.io/docs/concepts/services-networking/service/#environment-variables):
        // rendered again with the new Service's, the configuration routes to it.
        const from = serviceVariable(action.from);
        const to = serviceVariable(action.to.service);
        const env = { [`${from}_SERVICE_HOST`]: `\${${to}_SERVICE_HOST}`, [`${from}_SERVICE_PORT`]: `\${${to}_SERVICE_PORT}` };
        await runChaosAction(provider, recorder, stepId, { kind: 'reload-pod', workload: action.workload, pick: 'all', env });
        return;
      }
      if (how !== 'gateway-api' || !provider.moveRoute) throw new Error(`chaos step ${stepId}: provider ${provider.name} cannot change a gateway's route`);
      recorder.event('chaos', {
        workload: action.workload,
        message: action.recreate
          ? `delete the route of ${action.workload} to ${action.from}, then create it to ${action.to.service}`
          : `patch the route of ${action.workload}: backendRefs ${action.from} -> ${action.to.service}`,
        detail: { step: stepId, action: action.kind, from: action.from, to: action.to.service, ...(action.recreate ? { recreate: true } : {}) },
      });
      await provider.moveRoute(action.workload, action.to, { recreate: action.recreate === true });
      return;
    }
    case 'rollout-restart': {
      recorder.event('chaos', {
        workload: action.workload,
        message: `rollout restart ${action.workload}`,
        detail: { step: stepId, action: action.kind },
      });
      await provider.rolloutRestart(action.workload);
      return;
    }
  }
}

/** The prefix of a Service's variables in a pod's environment: `backend-b` -> `BACKEND_B`. */
function serviceVariable(service: string): string {
  return service.toUpperCase().replace(/-/g, '_');
}
