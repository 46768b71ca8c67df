// Traefik for the netns cluster: one program that is both a Gateway API controller (its
// kubernetesGateway provider) and the dataplane that serves the routes, built from its Go module at
// the release traefik/go.mod pins, into the cache beside the control plane (go-module-build.ts).
// The node agent runs it for the image `traefik` (node-agent/images.ts), since no registry is
// reachable to pull that image.

import { join } from 'node:path';
import { packageRoot } from '../../paths.ts';
import { goModulePrograms, requiredVersion, toolModule, type GoModule } from './go-module-build.ts';

/** The Go module that builds Traefik (traefik/ in the package). */
export const TRAEFIK_MODULE_DIR = join(packageRoot, 'traefik');

/** The release traefik/go.mod requires (`v3.6.12`). */
export const traefikPin = (moduleDir = TRAEFIK_MODULE_DIR): string => requiredVersion(moduleDir, 'github.com/traefik/traefik/v3');

export function traefikModule(moduleDir = TRAEFIK_MODULE_DIR): GoModule {
  const pin = traefikPin(moduleDir);
  return toolModule({
    dir: moduleDir,
    cacheName: 'traefik',
    pin,
    outputs: [{ output: 'traefik', pkg: 'github.com/traefik/traefik/v3/cmd/traefik' }],
    // Upstream's release build stamps the version the same way (its Makefile's
    // -X .../pkg/version.Version); without it `traefik version` and the logs say "dev".
    ldflags: `-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=${pin}`,
    describe: `Traefik ${pin} from its Go module (once per pin; 8 to 15 minutes cold on two cores)`,
  });
}

/** Where the built program is, building it first if the cache lacks it. */
export async function traefikProgram(log?: (line: string) => void): Promise<{ path: string; version: string }> {
  const mod = traefikModule();
  const dir = await goModulePrograms(mod, log);
  return { path: join(dir, 'traefik'), version: mod.pin };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const program = await traefikProgram((l) => console.log(l));
  console.log(`${program.version} ${program.path}`);
}
