// The objects a pod refers to (ConfigMaps, Secrets, Services, ServiceAccount tokens), read through
// the project's KubeClient. A missing ConfigMap or Secret is `undefined`: whether that is an error
// (optional or not) is the caller's to say.

import { statusOf, type KubeClient } from '../../kube/client.ts';
import type { DataObject, Pod, ServiceObject } from './pod-types.ts';

export interface PodObjects {
  configMap(namespace: string, name: string): Promise<DataObject | undefined>;
  secret(namespace: string, name: string): Promise<DataObject | undefined>;
  services(namespace: string): Promise<ServiceObject[]>;
  /** A token for the pod's ServiceAccount, bound to the pod (TokenRequest). */
  token(pod: Pod, audience: string | undefined, expirationSeconds: number | undefined): Promise<string>;
}

function path(namespace: string, kind: string, name?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

export function apiObjects(client: KubeClient): PodObjects {
  const get = async (namespace: string, kind: string, name: string) => {
    try {
      return (await client.request<{ data?: Record<string, string>; binaryData?: Record<string, string> }>('GET', path(namespace, kind, name))).body;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  };
  return {
    async configMap(namespace, name) {
      const body = await get(namespace, 'configmaps', name);
      if (!body) return undefined;
      const binaryData: Record<string, Buffer> = {};
      for (const [k, v] of Object.entries(body.binaryData ?? {})) binaryData[k] = Buffer.from(v, 'base64');
      return { data: body.data ?? {}, binaryData };
    },
    async secret(namespace, name) {
      const body = await get(namespace, 'secrets', name);
      if (!body) return undefined;
      const data: Record<string, string> = {};
      const binaryData: Record<string, Buffer> = {};
      for (const [k, v] of Object.entries(body.data ?? {})) {
        binaryData[k] = Buffer.from(v, 'base64');
        data[k] = binaryData[k].toString('utf8');
      }
      return { data, binaryData };
    },
    async services(namespace) {
      const body = (await client.request<{ items?: ServiceObject[] }>('GET', path(namespace, 'services'))).body;
      return body.items ?? [];
    },
    async token(pod, audience, expirationSeconds) {
      const namespace = pod.metadata.namespace ?? 'default';
      const sa = pod.spec?.serviceAccountName ?? 'default';
      const body = (
        await client.request<{ status?: { token?: string } }>('POST', `${path(namespace, 'serviceaccounts', sa)}/token`, {
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: {
              audiences: audience ? [audience] : [],
              // The API server's minimum is 10 minutes.
              expirationSeconds: Math.max(600, expirationSeconds ?? 3600),
              boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
            },
          },
        })
      ).body;
      const token = body.status?.token;
      if (!token) throw new Error(`TokenRequest for serviceaccount ${namespace}/${sa} returned no token`);
      return token;
    },
  };
}
