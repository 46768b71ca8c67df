import { describe, expect, it } from 'vitest';

import { containerEnv, EnvError, expand, serviceLinkEnv, type EnvContext } from './env.ts';
import type { Pod } from './pod-types.ts';

const pod: Pod = {
  metadata: { name: 'web-1', namespace: 'run-a', uid: 'u-1', labels: { app: 'web', tier: 'x' } },
  spec: { nodeName: 'node-1', serviceAccountName: 'sa', containers: [] },
};

function ctx(over: Partial<EnvContext> = {}): EnvContext {
  return {
    pod,
    podIP: '198.18.129.2',
    hostIP: '198.18.0.11',
    services: [{ metadata: { name: 'backend-svc' }, spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 8080 }, { name: 'metrics', port: 9090, protocol: 'TCP' }] } }],
    masterService: { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] } },
    configMap: (name) => (name === 'cm' ? { data: { A: '1', 'bad key': 'x', B: '2' } } : undefined),
    secret: (name) => (name === 's' ? { data: { token: 'sekret' } } : undefined),
    imagePath: '/usr/bin:/bin',
    ...over,
  };
}

describe('serviceLinkEnv', () => {
  it('writes the kubelet and Docker link variables', () => {
    const env = Object.fromEntries(serviceLinkEnv(ctx().services));
    expect(env).toEqual({
      BACKEND_SVC_SERVICE_HOST: '10.96.0.20',
      BACKEND_SVC_SERVICE_PORT: '8080',
      BACKEND_SVC_SERVICE_PORT_HTTP: '8080',
      BACKEND_SVC_SERVICE_PORT_METRICS: '9090',
      BACKEND_SVC_PORT: 'tcp://10.96.0.20:8080',
      BACKEND_SVC_PORT_8080_TCP: 'tcp://10.96.0.20:8080',
      BACKEND_SVC_PORT_8080_TCP_PROTO: 'tcp',
      BACKEND_SVC_PORT_8080_TCP_PORT: '8080',
      BACKEND_SVC_PORT_8080_TCP_ADDR: '10.96.0.20',
      BACKEND_SVC_PORT_9090_TCP: 'tcp://10.96.0.20:9090',
      BACKEND_SVC_PORT_9090_TCP_PROTO: 'tcp',
      BACKEND_SVC_PORT_9090_TCP_PORT: '9090',
      BACKEND_SVC_PORT_9090_TCP_ADDR: '10.96.0.20',
    });
  });

  it('skips headless Services', () => {
    expect(serviceLinkEnv([{ metadata: { name: 'h' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } }])).toEqual([]);
  });
});

describe('expand', () => {
  it('expands $(VAR), keeps unknown references, and $$ escapes', () => {
    const vars: Record<string, string> = { A: 'x' };
    expect(expand('$(A)-$(B)-$$(A)-$', (n) => vars[n])).toBe('x-$(B)-$(A)-$');
  });
});

describe('containerEnv', () => {
  it('orders service variables, envFrom, env; fieldRefs; PATH and HOSTNAME', () => {
    const env = containerEnv(
      {
        name: 'main',
        envFrom: [{ configMapRef: { name: 'cm' } }, { prefix: 'S_', secretRef: { name: 's' } }],
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
          { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
          { name: 'KEY', valueFrom: { configMapKeyRef: { name: 'cm', key: 'B' } } },
          { name: 'URL', value: 'http://$(BACKEND_SVC_SERVICE_HOST):$(BACKEND_SVC_SERVICE_PORT)/$(POD_NAME)' },
          { name: 'A', value: 'overridden' },
        ],
      },
      ctx(),
    );
    expect(env.get('PATH')).toBe('/usr/bin:/bin');
    expect(env.get('HOSTNAME')).toBe('web-1');
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.96.0.1');
    expect(env.get('KUBERNETES_SERVICE_PORT')).toBe('443');
    expect(env.get('KUBERNETES_SERVICE_PORT_HTTPS')).toBe('443');
    expect(env.get('BACKEND_SVC_SERVICE_HOST')).toBe('10.96.0.20');
    expect(env.get('POD_NAME')).toBe('web-1');
    expect(env.get('POD_IP')).toBe('198.18.129.2');
    expect(env.get('HOST_IP')).toBe('198.18.0.11');
    expect(env.get('NS')).toBe('run-a');
    expect(env.get('APP')).toBe('web');
    expect(env.get('NODE')).toBe('node-1');
    expect(env.get('SA')).toBe('sa');
    expect(env.get('KEY')).toBe('2');
    expect(env.get('B')).toBe('2');
    expect(env.get('bad key')).toBeUndefined();
    expect(env.get('S_token')).toBe('sekret');
    expect(env.get('URL')).toBe('http://10.96.0.20:8080/web-1');
    expect(env.get('A')).toBe('overridden');
  });

  it('enableServiceLinks: false keeps only the master service', () => {
    const env = containerEnv({ name: 'main' }, ctx({ pod: { ...pod, spec: { ...pod.spec, enableServiceLinks: false } } }));
    expect(env.get('KUBERNETES_SERVICE_HOST')).toBe('10.96.0.1');
    expect(env.has('BACKEND_SVC_SERVICE_HOST')).toBe(false);
  });

  it('a missing ConfigMap fails unless optional', () => {
    expect(() => containerEnv({ name: 'm', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }] }, ctx())).toThrow(EnvError);
    const env = containerEnv({ name: 'm', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } }] }, ctx());
    expect(env.has('X')).toBe(false);
  });
});
