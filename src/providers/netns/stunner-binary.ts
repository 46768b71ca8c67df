// STUNner's programs for the netns cluster: stunnerd (its TURN dataplane) and
// stunner-gateway-operator, built from their Go modules at the release stunner/go.mod pins, into
// the cache beside the control plane (go-module-build.ts). The node agent runs them for the images
// l7mp/stunnerd and l7mp/stunner-gateway-operator (node-agent/images.ts), since no registry is
// reachable to pull those images.

import { join } from 'node:path';
import { packageRoot } from '../../paths.ts';
import { goModulePrograms, requiredVersion, toolModule, type GoModule } from './go-module-build.ts';

/** The Go module that builds STUNner (stunner/ in the package). */
export const STUNNER_MODULE_DIR = join(packageRoot, 'stunner');

export const STUNNER_PROGRAMS = ['stunnerd', 'stunner-gateway-operator'] as const;
export type StunnerProgram = (typeof STUNNER_PROGRAMS)[number];

/** The operator release stunner/go.mod requires (`v0.18.0`); stunnerd is built at the stunner version it requires. */
export const stunnerPin = (moduleDir = STUNNER_MODULE_DIR): string => requiredVersion(moduleDir, 'github.com/l7mp/stunner-gateway-operator');

export function stunnerModule(moduleDir = STUNNER_MODULE_DIR): GoModule {
  const pin = stunnerPin(moduleDir);
  return toolModule({
    dir: moduleDir,
    cacheName: 'stunner',
    pin,
    outputs: [
      { output: 'stunnerd', pkg: 'github.com/l7mp/stunner/cmd/stunnerd' },
      { output: 'stunner-gateway-operator', pkg: 'github.com/l7mp/stunner-gateway-operator' },
    ],
    ldflags: '-s -w',
    describe: `STUNner ${pin} (stunnerd and stunner-gateway-operator) from their Go modules (once per pin; about 4 minutes cold on two cores)`,
  });
}

/** Where the built programs are, building them first if the cache lacks them. */
export async function stunnerPrograms(log?: (line: string) => void): Promise<{ dir: string; path: (p: StunnerProgram) => string; version: string }> {
  const mod = stunnerModule();
  const dir = await goModulePrograms(mod, log);
  return { dir, path: (p) => join(dir, p), version: mod.pin };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const programs = await stunnerPrograms((l) => console.log(l));
  console.log(`${programs.version} ${programs.dir}`);
}
