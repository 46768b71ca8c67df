// What a cluster test file gets from the globalSetup: the shared kind cluster as a ProviderSession,
// or the reason the suite is skipped.

import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { ProviderSession } from '../../../src/providers/index.ts';
import { kubeSession } from '../../../src/providers/kube-session.ts';
import { PUBLISHED_NODE_PORTS } from '../../../src/providers/kind/kind.ts';
import { KubeClient } from '../../../src/providers/kube/client.ts';

export const skipReason = inject('kindSkipReason');

/** `describe` title with the skip reason in it, so that the report says why each test was skipped. */
export function title(name: string): string {
  return skipReason ? `${name} (${skipReason})` : name;
}

export function kindClient(): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(inject('kindKubeconfig'));
  return new KubeClient(kc);
}

export function kindSession(): ProviderSession {
  return kubeSession('kind', kindClient(), { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] }, {
    allowNodeOperations: inject('kindCreated'),
    multiNode: true,
    containerStopSignals: inject('kindStopSignals'),
  });
}

/** Profiles the nightly matrix selects (ZERODROP_PROFILES, comma-separated). */
export function selectedProfiles(fallback: string[]): string[] {
  const raw = process.env['ZERODROP_PROFILES'];
  return raw ? raw.split(',').map((p) => p.trim()).filter((p) => p !== '') : fallback;
}
