// Helm for the netns cluster: the `helm` CLI a chart profile's release is installed with, built from
// its Go module at the release helm/go.mod pins, into the cache beside the control plane
// (go-module-build.ts). No machine this provider targets is assumed to have helm, and no chart
// repository is assumed reachable, so only charts from a directory install with it.

import { join } from 'node:path';
import { packageRoot } from '../../paths.ts';
import { cachedPrograms, goModulePrograms, requiredVersion, toolModule, type GoModule } from './go-module-build.ts';

/** The Go module that builds helm (helm/ in the package). */
export const HELM_MODULE_DIR = join(packageRoot, 'helm');

/** The release helm/go.mod requires (`v3.22.0`). */
export const helmPin = (moduleDir = HELM_MODULE_DIR): string => requiredVersion(moduleDir, 'helm.sh/helm/v3');

/** `v0.37.0` -> ['1', '37']: the Kubernetes release client-go v0.N tracks, as upstream's Makefile derives it. */
function kubeVersionOfClientGo(moduleDir: string): [string, string] {
  const [, minor] = /^v0\.(\d+)\./.exec(requiredVersion(moduleDir, 'k8s.io/client-go')) ?? [];
  if (!minor) throw new Error(`${moduleDir}/go.mod: k8s.io/client-go is not a v0.N release`);
  return ['1', minor];
}

export function helmModule(moduleDir = HELM_MODULE_DIR): GoModule {
  const pin = helmPin(moduleDir);
  const [major, minor] = kubeVersionOfClientGo(moduleDir);
  // Upstream's release build (its Makefile's LDFLAGS) stamps these: without the version `helm
  // version` says only the minor, and without the Kubernetes version `helm template` (no cluster to
  // ask) renders charts for a v1.20 cluster.
  const ldflags = [
    '-s -w',
    `-X helm.sh/helm/v3/internal/version.version=${pin}`,
    ...['pkg/lint/rules', 'pkg/chartutil'].flatMap((p) => [`-X helm.sh/helm/v3/${p}.k8sVersionMajor=${major}`, `-X helm.sh/helm/v3/${p}.k8sVersionMinor=${minor}`]),
  ].join(' ');
  return toolModule({
    dir: moduleDir,
    cacheName: 'helm',
    pin,
    outputs: [{ output: 'helm', pkg: 'helm.sh/helm/v3/cmd/helm' }],
    ldflags,
    describe: `helm ${pin} from its Go module (once per pin; about 2.5 minutes cold on two cores)`,
  });
}

/** The cached helm, undefined when it is not built: a run never builds it (`npm run helm:build` does). */
export async function cachedHelm(): Promise<string | undefined> {
  return (await cachedPrograms(helmModule()))['helm'];
}

// `npm run helm:build`: the only place that builds it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const mod = helmModule();
  const dir = await goModulePrograms(mod, (l) => console.log(l));
  console.log(`${mod.pin} ${join(dir, 'helm')}`);
}
