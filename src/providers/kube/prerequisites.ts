// What a cluster provider needs on this machine, checked before anything is created: each missing
// piece is one line with the command or page that installs it (`zerodrop run` prints them and exits 2).

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { onPath } from '../../profiles/requirements.ts';

export const INSTALL = {
  docker: 'install Docker Engine (https://docs.docker.com/engine/install/) and start it; `docker info` must succeed',
  kind: 'go install sigs.k8s.io/kind@v0.33.0, or a release binary (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)',
  helm: 'install Helm 3 (https://helm.sh/docs/intro/install/)',
  kubeconfig: 'pass --kubeconfig FILE (or set KUBECONFIG) and --context NAME of an existing cluster',
} as const;

/** Why the Docker engine cannot be used, or undefined when `docker info` answers. */
export async function dockerMissing(): Promise<string | undefined> {
  if (!onPath('docker')) return `docker not found on PATH (${INSTALL.docker})`;
  try {
    await execa('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 10_000 });
    return undefined;
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).split('\n').find((l) => l.trim()) ?? '';
    return `Docker engine not reachable: \`docker info\` failed${detail ? ` (${detail.trim()})` : ''} (${INSTALL.docker})`;
  }
}

export function kindMissing(): string | undefined {
  return onPath('kind') ? undefined : `kind not found on PATH (install: ${INSTALL.kind})`;
}

export function helmMissing(): string | undefined {
  return onPath('helm') ? undefined : `helm not found on PATH (install: ${INSTALL.helm})`;
}

/** The kubeconfig file a cluster provider would read: --kubeconfig, else $KUBECONFIG's first entry, else ~/.kube/config. */
export function kubeconfigPath(explicit?: string, env = process.env): string {
  if (explicit) return explicit;
  const fromEnv = env['KUBECONFIG']?.split(':').find((p) => p !== '');
  return fromEnv ?? join(homedir(), '.kube', 'config');
}

export function kubeconfigMissing(explicit?: string): string | undefined {
  const path = kubeconfigPath(explicit);
  return existsSync(path) ? undefined : `no kubeconfig at ${path} (${INSTALL.kubeconfig})`;
}
