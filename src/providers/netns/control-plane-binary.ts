// Where the cluster's programs come from: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kube-proxy and kubectl.
//
// Either a directory of release binaries the user already has (ZERODROP_KUBE_BINARIES, or the
// provider's `binaries` setting: one file per program, by its upstream name), or the multi-call
// binary built from this package's Go module (kubernetes/: upstream's modules at the release its
// go.mod pins), built and cached by go-module-build.ts.
//
// kubernetes/go.mod pins the default release; kubernetes/v1.MINOR/go.mod pins an older minor
// (`--kube-version`), built from the same main.go with `go build -modfile`, each cached by its pin.

import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
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

/** The Kubernetes release a go.mod pins: its `require k8s.io/kubernetes vX.Y.Z`. */
export function pinnedVersion(moduleDir = MODULE_DIR, modfile = 'go.mod'): string {
  const mod = readFileSync(join(moduleDir, modfile), 'utf8');
  const version = /^\s*(?:require\s+)?k8s\.io\/kubernetes (v\d+\.\d+\.\d+)\s*$/m.exec(mod)?.[1];
  if (!version) throw new Error(`${join(moduleDir, modfile)} pins no k8s.io/kubernetes version`);
  return version;
}

/** A release the netns cluster can run: its version and the go.mod pinning it, relative to kubernetes/. */
export interface ControlPlanePin {
  version: string;
  modfile: string;
}

/** Every pinned release, the default (kubernetes/go.mod) first, then kubernetes/v1.MINOR/go.mod newest first. */
export function controlPlanePins(moduleDir = MODULE_DIR): ControlPlanePin[] {
  const others = readdirSync(moduleDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^v1\.\d+$/.test(e.name) && existsSync(join(moduleDir, e.name, 'go.mod')))
    .map((e) => ({ version: pinnedVersion(moduleDir, join(e.name, 'go.mod')), modfile: join(e.name, 'go.mod') }))
    .sort((a, b) => minorOf(b.version) - minorOf(a.version));
  return [{ version: pinnedVersion(moduleDir), modfile: 'go.mod' }, ...others];
}

const minorOf = (version: string): number => Number(/^v?1\.(\d+)/.exec(version)?.[1] ?? 0);

/**
 * The pin `requested` names: a release (`v1.36.3`, `1.36.3`) or a minor (`1.36`, `v1.36`: its pinned
 * patch, as kind's and k3s's `--kube-version` name a minor); undefined when none is pinned.
 */
export function controlPlanePin(requested: string, moduleDir = MODULE_DIR): ControlPlanePin | undefined {
  return controlPlanePins(moduleDir).find((p) => names(requested, p.version));
}

/** Whether `requested` (a release or a minor, with or without the v) names `version` (`v1.36.3`). */
function names(requested: string, version: string): boolean {
  const match = /^v?(1\.\d+)(\.\d+)?$/.exec(requested);
  return match !== null && (match[2] ? version === `v${match[1]}${match[2]}` : version.startsWith(`v${match[1]}.`));
}

/** Why the netns cluster cannot run `requested`, naming the releases it can, or undefined. */
export function netnsKubeVersionProblem(requested: string, moduleDir = MODULE_DIR): string | undefined {
  if (controlPlanePin(requested, moduleDir)) return undefined;
  const pins = controlPlanePins(moduleDir).map((p, i) => (i === 0 ? `${p.version} (default)` : p.version));
  return `netns has no control plane pinned for Kubernetes ${requested}; pinned: ${pins.join(', ')} (kubernetes/pin.sh pins another)`;
}

/** Why the programs cannot be had (no binaries directory, no Go), or undefined. `version`: a pinned release, the default when omitted. */
export async function programsMissing(binaries = process.env['ZERODROP_KUBE_BINARIES'], version?: string): Promise<string | undefined> {
  if (binaries) {
    const absent = PROGRAMS.filter((p) => p !== 'kubectl' && !executable(join(binaries, p)));
    return absent.length === 0 ? undefined : `the binaries directory ${binaries} lacks ${absent.join(', ')} (release binaries of one Kubernetes version, by their upstream names)`;
  }
  if (await isBuilt(controlPlaneModule(MODULE_DIR, version))) return undefined;
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

/** The module as go-module-build.ts builds it: one multi-call binary, a link per program. `version`: a pinned release (controlPlanePin), the default when omitted. */
export function controlPlaneModule(moduleDir = MODULE_DIR, version?: string): GoModule {
  const pin = version === undefined ? controlPlanePins(moduleDir)[0]! : controlPlanePin(version, moduleDir);
  if (!pin) throw new Error(netnsKubeVersionProblem(version ?? '', moduleDir));
  const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(pin.version) ?? [];
  // Without these /version reports v0.0.0-master, and clients that compare versions misjudge it.
  const stamp = (pkg: string): string[] => [`-X ${pkg}.gitVersion=${pin.version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`];
  const sum = pin.modfile.replace(/\.mod$/, '.sum');
  return {
    dir: moduleDir,
    // The default's go.mod is the module's own; the others are read with -modfile.
    ...(pin.modfile === 'go.mod' ? {} : { modfile: pin.modfile }),
    cacheName: 'kubernetes',
    keyFiles: [pin.modfile, sum, 'main.go'],
    pin: pin.version,
    outputs: [{ output: 'zerodrop-kube', pkg: '.' }],
    links: Object.fromEntries(PROGRAMS.map((p) => [p, 'zerodrop-kube'])),
    ldflags: ['-s', '-w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version')].join(' '),
    parallelism: 2,
    describe: `Kubernetes ${pin.version} from upstream's Go modules (once per pin; 10-20 minutes cold on two cores)`,
  };
}

/**
 * The programs: from `binaries` when given, else the cached build of `version` (a pinned release,
 * the default when omitted), else a build now (`log` hears that it started: a cold build of
 * upstream's modules takes 10-20 minutes on two cores).
 */
export async function controlPlanePrograms(opts: { binaries?: string; version?: string; log?: (line: string) => void } = {}): Promise<ControlPlanePrograms> {
  const binaries = opts.binaries ?? process.env['ZERODROP_KUBE_BINARIES'];
  if (binaries) {
    const problem = await programsMissing(binaries);
    if (problem) throw new Error(problem);
    const version = (await execa(join(binaries, 'kube-apiserver'), ['--version'])).stdout.replace(/^Kubernetes\s+/, '').trim();
    if (opts.version !== undefined && !names(opts.version, version)) throw new Error(`Kubernetes ${opts.version} was asked for, and the binaries directory ${binaries} holds ${version}`);
    return { argv: (p) => [join(binaries, p)], version, source: binaries };
  }
  const mod = controlPlaneModule(MODULE_DIR, opts.version);
  const binary = join(await goModulePrograms(mod, opts.log), 'zerodrop-kube');
  return { argv: (p) => [binary, p], version: mod.pin, source: binary };
}

// `npm run kube:build [-- VERSION...]`: the default release, or each named one in turn.
if (import.meta.url === `file://${process.argv[1]}`) {
  const requested = process.argv.slice(2);
  for (const version of requested) {
    const problem = netnsKubeVersionProblem(version);
    if (problem) {
      console.error(problem);
      process.exit(2);
    }
  }
  for (const version of requested.length > 0 ? requested : [undefined]) {
    const programs = await controlPlanePrograms({ ...(version ? { version } : {}), log: (l) => console.log(l) });
    console.log(`${programs.version} ${programs.source}`);
  }
}
