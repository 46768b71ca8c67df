// The parts of core/v1 Pod, Service, ConfigMap and Secret the agent reads, as the API serves them
// (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/). Every field is
// optional as in JSON: the agent checks what it uses.

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface ObjectFieldSelector {
  fieldPath: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    resourceFieldRef?: { resource: string; containerName?: string };
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

export interface ProbeHandler {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: number | string; host?: string };
  grpc?: { port: number; service?: string };
}

export interface ProbeSpec extends ProbeHandler {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface LifecycleHandler extends ProbeHandler {
  sleep?: { seconds: number };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface ContainerSpec {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  volumeMounts?: VolumeMount[];
  readinessProbe?: ProbeSpec;
  livenessProbe?: ProbeSpec;
  startupProbe?: ProbeSpec;
  lifecycle?: { preStop?: LifecycleHandler; postStart?: LifecycleHandler; stopSignal?: string };
  /** A restartable init container (sidecar) has restartPolicy Always. */
  restartPolicy?: string;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: { resource: string; containerName?: string };
  mode?: number;
}

export interface VolumeSpec {
  name: string;
  emptyDir?: Record<string, unknown>;
  configMap?: { name: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  projected?: {
    defaultMode?: number;
    sources?: {
      serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
      configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
      secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
      downwardAPI?: { items?: DownwardAPIVolumeFile[] };
    }[];
  };
  hostPath?: { path: string };
}

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
  reason?: string;
  message?: string;
}

/** One of a pod's `spec.securityContext.sysctls`. */
export interface Sysctl {
  name: string;
  value: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    [k: string]: unknown;
  };
  spec?: {
    nodeName?: string;
    containers?: ContainerSpec[];
    initContainers?: ContainerSpec[];
    volumes?: VolumeSpec[];
    restartPolicy?: string;
    terminationGracePeriodSeconds?: number;
    serviceAccountName?: string;
    automountServiceAccountToken?: boolean;
    enableServiceLinks?: boolean;
    hostname?: string;
    subdomain?: string;
    hostNetwork?: boolean;
    hostIPC?: boolean;
    securityContext?: { sysctls?: Sysctl[]; [k: string]: unknown };
  };
  status?: { phase?: string; conditions?: PodCondition[]; podIP?: string; startTime?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export interface ServiceObject {
  metadata: { name: string; namespace?: string };
  spec?: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] };
}

/** A ConfigMap or a Secret, with Secret values already decoded from base64. */
export interface DataObject {
  data: Record<string, string>;
  binaryData?: Record<string, Buffer>;
}

export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}
