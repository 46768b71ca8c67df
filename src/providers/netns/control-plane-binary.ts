// Where the cluster's programs come from: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy and kubectl.
//
// Either a directory of release binaries the user already has (ZERODROP_KUBE_BINARIES, or the
// provider's `binaries` setting: one file per program, by its upstream name), or the multi-call
// binary built from this package's Go module (kubernetes/: upstream's modules at the release its
// go.mod pins). The build goes to a cache keyed by the module's files and the Go version, so it is
// made once per pin and machine; Go's own build cache makes a rebuild after a pin change cheaper.

import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../../paths.ts';

export const PROGRAMS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy', 'kubectl'] as const;
export type Program = (typeof PROGRAMS)[number];

/** The Go module that builds the control plane (kubernetes/ in the package). */
export const MODULE_DIR = join(packageRoot, 'kubernetes');

export interface ControlPlanePrograms {
  /** argv prefix that runs each program. */
  argv(program: Program): string[];
  /** The Kubernetes version the programs are (`v1.37.2`). */
  version: string;
  /** Where they came from, for messages. */
  source: string;
}

/** The Kubernetes release the module pins: `require k8s.io/kubernetes vX.Y.Z` in kubernetes/go.mod. */
export function pinnedVersion(moduleDir = MODULE_DIR): string {
  const mod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const version = /^\s*(?:require\s+)?k8s\.io\/kubernetes (v\d+\.\d+\.\d+)\s*$/m.exec(mod)?.[1];
  if (!version) throw new Error(`${join(moduleDir, 'go.mod')} pins no k8s.io/kubernetes version`);
  return version;
}

/** $ZERODROP_CACHE_DIR, else $XDG_CACHE_HOME/zerodrop, else ~/.cache/zerodrop. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ZERODROP_CACHE_DIR']) return env['ZERODROP_CACHE_DIR'];
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), 'zerodrop');
}

/** Why the programs cannot be had (no binaries directory, no Go), or undefined. */
export async function programsMissing(binaries = process.env['ZERODROP_KUBE_BINARIES']): Promise<string | undefined> {
  if (binaries) {
    const absent = PROGRAMS.filter((p) => p !== 'kubectl' && !executable(join(binaries, p)));
    return absent.length === 0 ? undefined : `the binaries directory ${binaries} lacks ${absent.join(', ')} (release binaries of one Kubernetes version, by their upstream names)`;
  }
  if (existsSync(builtBinary(await buildKey()))) return undefined;
  try {
    await execa('go', ['version']);
    return undefined;
  } catch {
    return 'Go is not installed (needed once to build the control plane from upstream\'s modules: apt-get install golang, or Go 1.26+ from go.dev), and no binaries directory was given (ZERODROP_KUBE_BINARIES=DIR with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy)';
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function buildKey(moduleDir = MODULE_DIR): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(moduleDir, file)));
  let go = 'no-go';
  try {
    go = (await execa('go', ['env', 'GOVERSION'])).stdout.trim();
  } catch {
    // Without Go only an earlier build can serve; its key then names no Go version.
  }
  hash.update(go);
  return `${pinnedVersion(moduleDir)}-${hash.digest('hex').slice(0, 12)}`;
}

function builtBinary(key: string): string {
  return join(cacheDir(), 'kubernetes', key, 'zerodrop-kube');
}

/**
 * The programs: from `binaries` when given, else the cached build, else a build now (`log` hears
 * that it started: a cold build of upstream's modules takes 10-20 minutes on two cores).
 */
export async function controlPlanePrograms(opts: { binaries?: string; log?: (line: string) => void } = {}): Promise<ControlPlanePrograms> {
  const binaries = opts.binaries ?? process.env['ZERODROP_KUBE_BINARIES'];
  if (binaries) {
    const problem = await programsMissing(binaries);
    if (problem) throw new Error(problem);
    const version = (await execa(join(binaries, 'kube-apiserver'), ['--version'])).stdout.replace(/^Kubernetes\s+/, '').trim();
    return { argv: (p) => [join(binaries, p)], version, source: binaries };
  }
  const key = await buildKey();
  const binary = builtBinary(key);
  if (!existsSync(binary)) await build(binary, opts.log ?? (() => {}));
  return { argv: (p) => [binary, p], version: pinnedVersion(), source: binary };
}

/** Builds the multi-call binary into `target`, atomically (a crash leaves no half binary under the name). */
async function build(target: string, log: (line: string) => void): Promise<void> {
  const dir = join(target, '..');
  mkdirSync(dir, { recursive: true });
  const version = pinnedVersion();
  const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(version) ?? [];
  // Without these /version reports v0.0.0-master, and clients that compare versions misjudge it.
  const stamp = (pkg: string): string[] => [`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`];
  const ldflags = ['-s', '-w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')].join(' ');
  const partial = `${target}.${process.pid}.partial`;
  log(`building Kubernetes ${version} from upstream's Go modules into ${dir} (once per pin; 10-20 minutes cold on two cores)`);
  const started = Date.now();
  try {
    await execa('go', ['build', '-p', '2', '-trimpath', '-ldflags', ldflags, '-o', partial, '.'], { cwd: MODULE_DIR });
  } catch (err) {
    rmSync(partial, { force: true });
    throw new Error(`building the control plane failed (go build in ${MODULE_DIR}): ${(err as Error).message.split('\n').slice(-12).join('\n')}`, { cause: err });
  }
  renameSync(partial, target);
  for (const p of PROGRAMS) {
    try {
      symlinkSync('zerodrop-kube', join(dir, p));
    } catch {
      // Another build of the same key made it first.
    }
  }
  log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const programs = await controlPlanePrograms({ log: (l) => console.log(l) });
  console.log(`${programs.version} ${programs.source}`);
}
