// Programs built from a Go module this package carries (kubernetes/, stunner/): each module pins
// upstream releases in its go.mod, and `go build` makes the programs from the Go module proxy.
//
// A build goes to a cache directory keyed by the module's files and the Go version, so it is made
// once per pin and machine; Go's own build cache makes a rebuild after a pin change cheaper. The
// directory appears whole or not at all (built under another name, then renamed), so a crashed or
// interrupted build never leaves a half binary where the next run would take it for a finished one.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

/** $ZERODROP_CACHE_DIR, else $XDG_CACHE_HOME/zerodrop, else ~/.cache/zerodrop. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ZERODROP_CACHE_DIR']) return env['ZERODROP_CACHE_DIR'];
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), 'zerodrop');
}

/** The release of `path` that the module in `moduleDir` requires (`v3.6.12`): the pin a build is keyed by. */
export function requiredVersion(moduleDir: string, path: string): string {
  const file = join(moduleDir, 'go.mod');
  const version = new RegExp(`^\\s*(?:require\\s+)?${path.replaceAll('.', '\\.')} (v\\d+\\.\\d+\\.\\d+\\S*)`, 'm').exec(readFileSync(file, 'utf8'))?.[1];
  if (!version) throw new Error(`${file} pins no ${path} version`);
  return version;
}

/** A module's directory in Go's module cache, downloaded first if absent; run in `moduleDir`, whose go.sum vouches for it. */
export async function downloadedModule(moduleDir: string, path: string, version: string): Promise<string> {
  const { stdout } = await execa('go', ['mod', 'download', '-json', `${path}@${version}`], { cwd: moduleDir });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${path}@${version} names no directory`);
  return dir;
}

export interface GoModule {
  /** The module's directory (holds go.mod and the sources). */
  dir: string;
  /**
   * Another go.mod to build with (`go build -modfile`), relative to `dir`: one set of sources built
   * at several pins (kubernetes/v1.36/go.mod beside kubernetes/go.mod). List it in keyFiles too.
   */
  modfile?: string;
  /** Its name under the cache directory (`kubernetes` -> ~/.cache/zerodrop/kubernetes/<key>/). */
  cacheName: string;
  /** The module's files whose content decides what is built (go.mod, go.sum, sources). */
  keyFiles: readonly string[];
  /** The pin, readable, first in the key (`v1.37.2`). */
  pin: string;
  /** What to build: `go build -o <dir>/<output> <pkg>` for each. */
  outputs: readonly { output: string; pkg: string }[];
  /** Links made beside the outputs after the build, name -> output (a multi-call binary's names). */
  links?: Readonly<Record<string, string>>;
  ldflags?: string;
  /** `go build -p`: how many packages compile at once. */
  parallelism: number;
  /** Run the compiler at the lowest CPU priority (`nice -n 19`), so a build never slows timing-sensitive work beside it. */
  nice?: boolean;
  /** The first line of the "building" message: what and how long it takes cold. */
  describe: string;
}

/** `<pin>-<hash>`: the hash covers the module's key files and the Go version. */
export async function buildKey(mod: Pick<GoModule, 'dir' | 'keyFiles' | 'pin'>): Promise<string> {
  let go = 'no-go';
  try {
    go = (await execa('go', ['env', 'GOVERSION'])).stdout.trim();
  } catch {
    // Without Go only an earlier build can serve; its key then names no Go version.
  }
  return keyWith(mod, go);
}

function keyWith(mod: Pick<GoModule, 'dir' | 'keyFiles' | 'pin'>, go: string): string {
  const hash = createHash('sha256');
  for (const file of mod.keyFiles) hash.update(readFileSync(join(mod.dir, file)));
  hash.update(go);
  return `${mod.pin}-${hash.digest('hex').slice(0, 12)}`;
}

let goVersionNow: string | undefined;

/**
 * cachedPrograms for a caller that cannot await: a profile's plan (a gateway profile run from a
 * build). The Go version is asked once per process, the same way buildKey asks it.
 */
export function cachedProgramsNow(mod: GoModule): Record<string, string> {
  if (goVersionNow === undefined) {
    try {
      goVersionNow = execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      goVersionNow = 'no-go';
    }
  }
  return programsIn(mod, join(cacheDir(), mod.cacheName, keyWith(mod, goVersionNow)));
}

/**
 * A consumer module of the package's (stunner/, traefik/, helm/: go.mod and go.sum only) that builds
 * another project's programs: keyed by those two files, and built one package at a time at the
 * lowest priority, since two cores are shared with work that measures time.
 */
export function toolModule(mod: Pick<GoModule, 'dir' | 'cacheName' | 'pin' | 'outputs' | 'ldflags' | 'describe'>): GoModule {
  return { ...mod, keyFiles: ['go.mod', 'go.sum'], parallelism: 1, nice: true };
}

/** The directory a build of `mod` is (or would be) in. */
export async function builtDir(mod: GoModule): Promise<string> {
  return join(cacheDir(), mod.cacheName, await buildKey(mod));
}

/** True when every output of the module's current build is in the cache. */
export async function isBuilt(mod: GoModule): Promise<boolean> {
  const dir = await builtDir(mod);
  return mod.outputs.every((o) => existsSync(join(dir, o.output)));
}

/** The programs the cache holds for the module's current build (output -> path), none when it is not built: the node agents' image map takes these, never a build. */
export async function cachedPrograms(mod: GoModule): Promise<Record<string, string>> {
  return programsIn(mod, await builtDir(mod));
}

function programsIn(mod: GoModule, dir: string): Record<string, string> {
  if (!mod.outputs.every((o) => existsSync(join(dir, o.output)))) return {};
  return Object.fromEntries(mod.outputs.map((o) => [o.output, join(dir, o.output)]));
}

/** The directory holding the module's programs: the cached build, else a build now (`log` hears that it started and how long it took). */
export async function goModulePrograms(mod: GoModule, log: (line: string) => void = () => {}): Promise<string> {
  const dir = await builtDir(mod);
  if (mod.outputs.every((o) => existsSync(join(dir, o.output)))) return dir;
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  log(`building ${mod.describe} into ${dir}`);
  const started = Date.now();
  try {
    for (const { output, pkg } of mod.outputs) {
      const args = ['build', ...(mod.modfile ? [`-modfile=${mod.modfile}`] : []), '-p', String(mod.parallelism), '-trimpath', ...(mod.ldflags ? ['-ldflags', mod.ldflags] : []), '-o', join(partial, output), pkg];
      const [file, argv] = mod.nice ? ['nice', ['-n', '19', 'go', ...args]] : ['go', args];
      await execa(file, argv, { cwd: mod.dir });
    }
    for (const [name, target] of Object.entries(mod.links ?? {})) symlinkSync(target, join(partial, name));
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`building ${mod.cacheName} failed (go build in ${mod.dir}): ${(err as Error).message.split('\n').slice(-12).join('\n')}`, { cause: err });
  }
  // A directory left by a crashed older build (without every output) is replaced; one another
  // process finished meanwhile is kept, and this build dropped.
  if (mod.outputs.every((o) => existsSync(join(dir, o.output)))) {
    rmSync(partial, { recursive: true, force: true });
  } else {
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  }
  log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return dir;
}
