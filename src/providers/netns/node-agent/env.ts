// A container's environment, built as the kubelet builds it (makeEnvironmentVariables in
// pkg/kubelet/kubelet_pods.go, https://kubernetes.io/docs/tasks/inject-data-application/define-environment-variable-container/):
//  1. the Service variables: `KUBERNETES_SERVICE_*` of the `kubernetes` Service in `default`
//     always, and with enableServiceLinks (default true) those of every Service of the pod's
//     namespace that has a cluster IP (pkg/kubelet/envvars/envvars.go FromServices: `<NAME>_SERVICE_HOST`,
//     `<NAME>_SERVICE_PORT`, `<NAME>_SERVICE_PORT_<PORT>` and the Docker link variables `<NAME>_PORT...`;
//     https://kubernetes.io/docs/concepts/services-networking/service/#environment-variables);
//  2. envFrom, in order (a key that is not a valid variable name is skipped);
//  3. env, in order, each value with `$(VAR)` expanded from what is defined so far and the Service
//     variables (`$$(VAR)` escapes it; an undefined reference stays as written);
// then what the image and the runtime add: the image's PATH unless the pod sets one, HOSTNAME.

import type { ContainerSpec, DataObject, Pod, ServiceObject } from './pod-types.ts';

export interface EnvContext {
  pod: Pod;
  podIP: string;
  hostIP: string;
  /** Services of the pod's namespace (for the link variables). */
  services: readonly ServiceObject[];
  /** The `kubernetes` Service of namespace `default`, when it exists. */
  masterService?: ServiceObject;
  configMap(name: string): DataObject | undefined;
  secret(name: string): DataObject | undefined;
  /** The image's PATH ('' when the caller adds it later). */
  imagePath: string;
}

export class EnvError extends Error {}

const VALID_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function envName(name: string): string {
  return name.toUpperCase().replaceAll('-', '_');
}

/** The variables of Services, as pkg/kubelet/envvars FromServices writes them. */
export function serviceLinkEnv(services: readonly ServiceObject[]): [string, string][] {
  const out: [string, string][] = [];
  for (const service of services) {
    const ip = service.spec?.clusterIP;
    const ports = service.spec?.ports ?? [];
    // Headless Services (clusterIP None) and those without a port get none.
    if (!ip || ip === 'None' || ports.length === 0) continue;
    const prefix = envName(service.metadata.name);
    out.push([`${prefix}_SERVICE_HOST`, ip]);
    out.push([`${prefix}_SERVICE_PORT`, String(ports[0]!.port)]);
    for (const port of ports) if (port.name) out.push([`${prefix}_SERVICE_PORT_${envName(port.name)}`, String(port.port)]);
    const hostPort = ip.includes(':') ? `[${ip}]` : ip;
    ports.forEach((port, i) => {
      const protocol = (port.protocol ?? 'TCP').toLowerCase();
      const url = `${protocol}://${hostPort}:${port.port}`;
      // Docker special-cases the first port.
      if (i === 0) out.push([`${prefix}_PORT`, url]);
      const portPrefix = `${prefix}_PORT_${port.port}_${protocol.toUpperCase()}`;
      out.push([portPrefix, url], [`${portPrefix}_PROTO`, protocol], [`${portPrefix}_PORT`, String(port.port)], [`${portPrefix}_ADDR`, ip]);
    });
  }
  return out;
}

/** `$(VAR)` expansion (k8s.io/kubernetes/third_party/forked/golang/expansion): `$$` escapes a `$`. */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = lookup(name);
      out += value ?? `$(${name})`;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/** The value of a downward API fieldRef (https://kubernetes.io/docs/concepts/workloads/pods/downward-api/#downwardapi-fieldRef). */
export function fieldRefValue(pod: Pod, fieldPath: string, podIP: string, hostIP: string): string {
  const meta = pod.metadata;
  const mapRef = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (mapRef) return (mapRef[1] === 'labels' ? meta.labels : meta.annotations)?.[mapRef[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name;
    case 'metadata.namespace':
      return meta.namespace ?? 'default';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.hostIP':
    case 'status.hostIPs':
      return hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return podIP;
    default:
      throw new EnvError(`unsupported fieldRef ${fieldPath}`);
  }
}

/** The downward API file format of labels and annotations: `key="value"` lines, sorted. */
export function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map![k])}`)
    .join('\n');
}

/** NAME=VALUE pairs for the container, in the order the kubelet produces them (later wins). */
export function containerEnv(container: ContainerSpec, ctx: EnvContext): Map<string, string> {
  const serviceEnv = new Map<string, string>();
  // The master service's variables come first; a namespace Service of the same name overrides them.
  if (ctx.masterService) for (const [k, v] of serviceLinkEnv([ctx.masterService])) serviceEnv.set(k, v);
  if (ctx.pod.spec?.enableServiceLinks !== false) {
    for (const [k, v] of serviceLinkEnv(ctx.services.filter((s) => s.metadata.name !== 'kubernetes' || ctx.pod.metadata.namespace !== 'default'))) serviceEnv.set(k, v);
  }
  const own = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = from.configMapRef ? ctx.configMap(ref.name) : ctx.secret(ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw new EnvError(`${from.configMapRef ? 'configmap' : 'secret'} "${ref.name}" not found`);
    }
    for (const [key, value] of Object.entries(data.data)) {
      const name = (from.prefix ?? '') + key;
      if (VALID_NAME.test(name)) own.set(name, value);
    }
  }
  const lookup = (name: string) => own.get(name) ?? serviceEnv.get(name);
  for (const v of container.env ?? []) {
    let value: string | undefined;
    if (v.valueFrom?.fieldRef) value = fieldRefValue(ctx.pod, v.valueFrom.fieldRef.fieldPath, ctx.podIP, ctx.hostIP);
    else if (v.valueFrom?.configMapKeyRef || v.valueFrom?.secretKeyRef) {
      const ref = (v.valueFrom.configMapKeyRef ?? v.valueFrom.secretKeyRef)!;
      const kind = v.valueFrom.configMapKeyRef ? 'configmap' : 'secret';
      const data = kind === 'configmap' ? ctx.configMap(ref.name) : ctx.secret(ref.name);
      value = data?.data[ref.key];
      if (value === undefined) {
        if (ref.optional) continue;
        throw new EnvError(data ? `couldn't find key ${ref.key} in ${kind} ${ctx.pod.metadata.namespace}/${ref.name}` : `${kind} "${ref.name}" not found`);
      }
    } else if (v.valueFrom?.resourceFieldRef) {
      // No resource limits are enforced: the node's allocatable is what a container may use.
      value = v.valueFrom.resourceFieldRef.resource.includes('cpu') ? '2' : String(8 * 1024 ** 3);
    } else value = expand(v.value ?? '', lookup);
    own.set(v.name, value);
  }
  const env = new Map<string, string>();
  if (ctx.imagePath) env.set('PATH', ctx.imagePath);
  env.set('HOSTNAME', ctx.pod.spec?.hostname ?? ctx.pod.metadata.name);
  for (const [k, v] of serviceEnv) env.set(k, v);
  for (const [k, v] of own) env.set(k, v);
  return env;
}

/** command and args with `$(VAR)` expanded from the container's environment, as the kubelet does. */
export function expandArgv(argv: readonly string[], env: Map<string, string>): string[] {
  return argv.map((a) => expand(a, (name) => env.get(name)));
}
