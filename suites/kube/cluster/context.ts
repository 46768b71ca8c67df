// What a cluster test file gets from the globalSetup: the shared cluster (kind or netns) as a
// ProviderSession, or the reason the suite is skipped.

import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { ProviderSession } from '../../../src/providers/index.ts';
import { kubeSession } from '../../../src/providers/kube-session.ts';
import { KubeClient } from '../../../src/providers/kube/client.ts';
import type { Exposure } from '../../../src/providers/kube/kube-provider.ts';

export const skipReason = inject('clusterSkipReason');
/** kind or netns: the provider name results and reports carry. */
export const providerName = inject('clusterProvider');

/** `describe` title with the provider and the skip reason in it, so that the report says where each test ran or why it was skipped. */
export function title(name: string): string {
  return skipReason ? `${name} on ${providerName} (${skipReason})` : `${name} on ${providerName}`;
}

export function clusterClient(): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(inject('clusterKubeconfig'));
  return new KubeClient(kc);
}

export function clusterSession(): ProviderSession {
  const exposure = JSON.parse(inject('clusterExposure')) as Exposure;
  return kubeSession(providerName, clusterClient(), exposure, {
    allowNodeOperations: inject('clusterCreated'),
    // Both clusters have workers: kind's two, netns's two nodes.
    multiNode: true,
    containerStopSignals: inject('clusterStopSignals'),
  });
}

/** Profiles the nightly matrix selects (ZERODROP_PROFILES, comma-separated). */
export function selectedProfiles(fallback: string[]): string[] {
  const raw = process.env['ZERODROP_PROFILES'];
  return raw ? raw.split(',').map((p) => p.trim()).filter((p) => p !== '') : fallback;
}
