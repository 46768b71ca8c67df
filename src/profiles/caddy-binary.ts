// A current Caddy for the `caddy-built` gateway profiles: built from its Go module at the release
// caddy/go.mod pins, into the cache beside the netns cluster's programs (go-module-build.ts), since
// Debian 12 packages Caddy 2.6.2, which lacks reverse_proxy's stream_close_delay (2.7.0). It lives
// with the profiles, not the netns provider: the local provider runs it like any gateway binary.

import { join } from 'node:path';
import { packageRoot } from '../paths.ts';
import { ProfileCannotPlay } from './profile.ts';
import { cachedProgramsNow, goModulePrograms, requiredVersion, toolModule, type GoModule } from '../providers/netns/go-module-build.ts';

/** The Go module that builds Caddy (caddy/ in the package). */
export const CADDY_MODULE_DIR = join(packageRoot, 'caddy');

/** The release caddy/go.mod requires (`v2.11.9`). */
export const caddyPin = (moduleDir = CADDY_MODULE_DIR): string => requiredVersion(moduleDir, 'github.com/caddyserver/caddy/v2');

export function caddyModule(moduleDir = CADDY_MODULE_DIR): GoModule {
  const pin = caddyPin(moduleDir);
  return toolModule({
    dir: moduleDir,
    cacheName: 'caddy',
    pin,
    outputs: [{ output: 'caddy', pkg: 'github.com/caddyserver/caddy/v2/cmd/caddy' }],
    // Caddy finds its version among the build's dependencies, and here it is the main module, so
    // `caddy version` would say "unknown": CustomVersion is the stamp caddy.go offers packagers.
    // Upstream's release build strips the same way (-s -w).
    ldflags: `-s -w -X github.com/caddyserver/caddy/v2.CustomVersion=${pin}`,
    describe: `Caddy ${pin} from its Go module (once per pin; about 6 minutes cold on two cores)`,
  });
}

/** The cached caddy for a pod's plan; unbuilt, the scenario skips the profile with the command that builds it. */
export function builtCaddy(): string {
  const program = cachedProgramsNow(caddyModule())['caddy'];
  if (program === undefined) throw new ProfileCannotPlay(`Caddy ${caddyPin()} is not built (run: npm run caddy:build, about 6 minutes once)`);
  return program;
}

// `npm run caddy:build`: the only place that builds it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const mod = caddyModule();
  const dir = await goModulePrograms(mod, (l) => console.log(l));
  console.log(`${mod.pin} ${join(dir, 'caddy')}`);
}
