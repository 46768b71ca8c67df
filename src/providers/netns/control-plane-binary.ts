// Where the cluster's programs come from: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy and kubectl.
//
// Either a directory of release binaries the user already has (ZERODROP_KUBE_BINARIES, or the
// provider's `binaries` setting: one file per program, by its upstream name), or the multi-call
// binary built from this package's Go module (kubernetes/: upstream's modules at the release its
// go.mod pins), built and cached by go-module-build.ts.

import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../../paths.ts';
import { goModulePrograms, isBuilt, type GoModule } from './go-module-build.ts';

export { cacheDir } from './go-module-build.ts';

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

/** Why the programs cannot be had (no binaries directory, no Go), or undefined. */
export async function programsMissing(binaries = process.env['ZERODROP_KUBE_BINARIES']): Promise<string | undefined> {
  if (binaries) {
    const absent = PROGRAMS.filter((p) => p !== 'kubectl' && !executable(join(binaries, p)));
    return absent.length === 0 ? undefined : `the binaries directory ${binaries} lacks ${absent.join(', ')} (release binaries of one Kubernetes version, by their upstream names)`;
  }
  if (await isBuilt(controlPlaneModule())) return undefined;
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

/** The module as go-module-build.ts builds it: one multi-call binary, a link per program. */
export function controlPlaneModule(moduleDir = MODULE_DIR): GoModule {
  const version = pinnedVersion(moduleDir);
  const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(version) ?? [];
  // Without these /version reports v0.0.0-master, and clients that compare versions misjudge it.
  const stamp = (pkg: string): string[] => [`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`];
  return {
    dir: moduleDir,
    cacheName: 'kubernetes',
    keyFiles: ['go.mod', 'go.sum', 'main.go'],
    pin: version,
    outputs: [{ output: 'zerodrop-kube', pkg: '.' }],
    links: Object.fromEntries(PROGRAMS.map((p) => [p, 'zerodrop-kube'])),
    ldflags: ['-s', '-w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')].join(' '),
    parallelism: 2,
    describe: `Kubernetes ${version} from upstream's Go modules (once per pin; 10-20 minutes cold on two cores)`,
  };
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
  const mod = controlPlaneModule();
  const binary = join(await goModulePrograms(mod, opts.log), 'zerodrop-kube');
  return { argv: (p) => [binary, p], version: mod.pin, source: binary };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const programs = await controlPlanePrograms({ log: (l) => console.log(l) });
  console.log(`${programs.version} ${programs.source}`);
}
