// What a cluster provider needs on this machine, checked before anything is created: each missing
// piece is one line with the command or page that installs it (`zerodrop run` prints them and exits 2).

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { onPath } from '../../profiles/requirements.ts';
import { KIND_VERSION } from '../node-images.ts';

export const INSTALL = {
  docker: 'install Docker Engine (https://docs.docker.com/engine/install/) and start it; `docker info` must succeed',
  kind: `go install sigs.k8s.io/kind@${KIND_VERSION}, or its release binary (https://kind.sigs.k8s.io/dl/${KIND_VERSION}/kind-linux-amd64; https://kind.sigs.k8s.io/docs/user/quick-start/#installation)`,
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

/**
 * What the installed kind's version means for the node images zerodrop pins (built for
 * KIND_VERSION). kind's own words (https://kind.sigs.k8s.io/docs/design/node-image): "We only support
 * that node images will create a working Kubernetes node at the advertised version with the kind
 * version they were released with (and best effort with other releases)". Any other release is thus
 * best effort; where to draw the line is zerodrop's choice: a newer kind is warned about, an older
 * kind or a pre-release of the pinned one is refused (nothing kind says covers a binary running
 * images published after it), since installing the pinned release is one command.
 */
export function kindVersionVerdict(versionOutput: string): { refuse?: string; warn?: string } {
  // `kind version` prints DisplayVersion(): "kind v0.33.0 go1.25.3 linux/amd64"; a pre-release adds
  // "-alpha.N+commit" (pkg/cmd/kind/version/version.go).
  const found = /\bv?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.+-]+)?/.exec(versionOutput);
  const pinned = /^v(\d+)\.(\d+)\.(\d+)$/.exec(KIND_VERSION);
  const install = `install kind ${KIND_VERSION}: ${INSTALL.kind}`;
  if (!found || !pinned) return { warn: `could not read kind's version from \`kind version\` ("${versionOutput.trim()}"); zerodrop's node images are built for kind ${KIND_VERSION}` };
  const have = [Number(found[1]), Number(found[2]), Number(found[3])];
  const want = [Number(pinned[1]), Number(pinned[2]), Number(pinned[3])];
  const order = have[0]! - want[0]! || have[1]! - want[1]! || have[2]! - want[2]!;
  const shown = `v${have.join('.')}${found[4] ?? ''}`;
  if (order < 0 || (order === 0 && found[4])) {
    return { refuse: `kind ${shown} is older than ${KIND_VERSION}, the release zerodrop's node images are built for (kind guarantees them only with that release); ${install}` };
  }
  if (order > 0) {
    return { warn: `kind ${shown} is newer than ${KIND_VERSION}, the release zerodrop's node images are built for: kind runs them only "best effort" with other releases (https://kind.sigs.k8s.io/docs/design/node-image)` };
  }
  return {};
}

/** Runs `kind version` and judges it (kindVersionVerdict); a kind that cannot answer is refused. */
export async function kindVersionProblem(): Promise<{ refuse?: string; warn?: string }> {
  try {
    const { stdout } = await execa('kind', ['version'], { timeout: 10_000 });
    return kindVersionVerdict(stdout);
  } catch (err) {
    return { refuse: `\`kind version\` failed (${(err as Error).message.split('\n')[0] ?? ''}); install kind ${KIND_VERSION}: ${INSTALL.kind}` };
  }
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
