// Testing your own gateway from your own Helm chart: charts/nginx-gateway is nginx as a team would
// package it, in front of one backend Service. With ci/drain-values.yaml it drains without dropping a
// request; with the chart's defaults it does not. Each run installs its own release of the chart
// into the run's namespace and uninstalls it after. Needs a cluster provider (kind, k3s, netns):
// `npx zerodrop run --provider netns`. docs/own-gateway.md walks through every field.
import { fileURLToPath } from 'node:url';
import { DATAPLANE_LABEL, defineConfig, defineHelmProfile } from 'zerodrop';

/** Beside this file, wherever `zerodrop run` is started. */
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

const nginxGateway = defineHelmProfile({
  name: 'nginx-gateway',
  description: 'nginx from our chart, drain-correct: preStop outlasts deprogramming and keepalive_time, then SIGQUIT bounded by worker_shutdown_timeout.',
  chart: { chart: here('charts/nginx-gateway') },
  valuesFiles: [here('charts/nginx-gateway/ci/drain-values.yaml')],
  // Per run, last (they win): the pods carry the workload label the run finds them by, listen on the
  // port its gateway Service targets, and forward to its backend Service.
  values: (ctx) => ({
    replicaCount: ctx.replicas,
    podLabels: { [DATAPLANE_LABEL]: ctx.workload },
    port: ctx.port,
    backend: { service: ctx.dataplane.routesTo.service, port: ctx.dataplane.routesTo.port },
  }),
  protocols: ['http'],
  // What ci/drain-values.yaml configures: the preStop (5 s) is the shortest drain; nginx is gone by
  // preStop + worker_shutdown_timeout (10 s), and the grace period (13 s) is the bound promised, as a
  // GatewayClass run reads it from the pod. Promised at 11 s, the scenario's long requests (halfway
  // into the promise) would end 2 s before a request nginx must cut at its timeout lets it exit, and
  // on a cluster that cut request names no pod: its idle moment would be unknown, not judged.
  terminationGracePeriodSeconds: 13,
  drain: { minDrainSeconds: 5, drainTimeoutSeconds: 13 },
  docs: 'https://nginx.org/en/docs/control.html',
  naive: {
    description: 'nginx from our chart with its defaults: no preStop, so the listener closes at SIGQUIT while kube-proxy still sends it new connections.',
    valuesFiles: [],
    terminationGracePeriodSeconds: 30,
    drain: undefined,
  },
});

export default defineConfig({
  provider: 'netns',
  profiles: [nginxGateway, nginxGateway.naive!],
  scenarios: ['gateway-delete-http'],
});
