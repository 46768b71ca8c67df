// A fresh project that installs zerodrop the way a team does (`npm install zerodrop vitest`), from the
// tarball `npm pack` makes, with no registry access: its package-lock is the part of this
// repository's lock that the adopter's dependencies reach, so `npm ci --offline` takes every
// package from the npm cache that this repository's own `npm ci` filled.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/paths.ts';

const run = promisify(execFile);

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  peer?: boolean;
  [key: string]: unknown;
}

interface Lock {
  name: string;
  version: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

/** Where Node would find `name` from the package at `from` (a lock path like node_modules/a/node_modules/b). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir === '' ? '' : `${dir}/`}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

/**
 * The entries of `lock` that `roots` (package names installed at the top) reach through their
 * dependencies, optional and required peer dependencies, as Node resolves them.
 */
export function lockSubset(lock: Lock, roots: readonly string[]): Record<string, LockEntry> {
  const kept: Record<string, LockEntry> = {};
  const queue: string[] = [];
  const visit = (from: string, name: string, optional: boolean) => {
    const path = resolveIn(lock.packages, from, name);
    if (path === undefined) {
      if (optional) return;
      throw new Error(`lockSubset: ${name} (needed by ${from || 'the project'}) is not in the lock`);
    }
    if (kept[path]) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock.packages[path] as LockEntry;
    kept[path] = entry;
    queue.push(path);
  };
  for (const name of roots) visit('', name, false);
  while (queue.length > 0) {
    const path = queue.shift() as string;
    const entry = kept[path] as LockEntry;
    for (const name of Object.keys(entry.dependencies ?? {})) visit(path, name, false);
    for (const name of Object.keys(entry.optionalDependencies ?? {})) visit(path, name, true);
    for (const name of Object.keys(entry.peerDependencies ?? {})) visit(path, name, entry.peerDependenciesMeta?.[name]?.optional === true);
  }
  return kept;
}

export interface AdopterProject {
  dir: string;
  tarball: string;
  /** Runs a command of the project (npx, npm, node) with its node_modules/.bin first on PATH. */
  exec(file: string, args: readonly string[], options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string }): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Output is matched as text: no colour codes, whatever the outer run asked for. */
function withoutColour(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _force, ...rest } = env;
  return rest;
}

/**
 * Packs this repository (`npm pack`, which builds dist/ through `prepack`) and installs the tarball
 * with `devDependencies` (name -> version as this repository locks it) into a new temporary project.
 */
export async function createAdopterProject({ devDependencies }: { devDependencies: readonly string[] }): Promise<AdopterProject> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-adopter-'));
  const tarball = await packInto(dir);
  const tarballName = basename(tarball);

  const repoLock = JSON.parse(await readFile(join(packageRoot, 'package-lock.json'), 'utf8')) as Lock;
  const self = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    dependencies: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    bin: Record<string, string>;
    engines: Record<string, string>;
    license: string;
  };
  const pinned = Object.fromEntries(devDependencies.map((name) => [name, repoLock.packages[`node_modules/${name}`]?.version ?? '']));
  for (const [name, version] of Object.entries(pinned)) if (!version) throw new Error(`${name} is not in this repository's lock`);
  const dependencies = { [self.name]: `file:${tarballName}` };
  const manifest = { name: 'adopter', version: '1.0.0', private: true, type: 'module', dependencies, devDependencies: pinned };
  const integrity = `sha512-${createHash('sha512').update(await readFile(tarball)).digest('base64')}`;
  const packages = {
    '': { name: manifest.name, version: manifest.version, dependencies, devDependencies: pinned },
    [`node_modules/${self.name}`]: {
      version: self.version,
      resolved: `file:${tarballName}`,
      integrity,
      license: self.license,
      dependencies: self.dependencies,
      ...(self.peerDependencies ? { peerDependencies: self.peerDependencies, peerDependenciesMeta: self.peerDependenciesMeta } : {}),
      bin: self.bin,
      engines: self.engines,
    },
    ...lockSubset(repoLock, [...Object.keys(self.dependencies), ...devDependencies]),
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(dir, 'package-lock.json'), `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
  // --ignore-scripts: the install scripts of dependencies (native builds of optional SSH helpers) play no part here.
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, maxBuffer: 16 << 20 });

  return { dir, tarball, exec: projectExec(dir) };
}

/** Packs this repository (`npm pack`, which builds dist/) into `dir`; returns the tarball's path. */
export async function packInto(dir: string): Promise<string> {
  await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: packageRoot, maxBuffer: 16 << 20 });
  const tarballName = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (!tarballName) throw new Error(`npm pack left no tarball in ${dir}`);
  return join(dir, tarballName);
}

/** Runs commands in the project at `dir` as a user does, its node_modules/.bin first on PATH. */
export function projectExec(dir: string): AdopterProject['exec'] {
  const path = `${join(dir, 'node_modules', '.bin')}:${process.env['PATH'] ?? ''}`;
  return (file, args, { env = {}, timeoutMs = 120_000, cwd = dir } = {}) =>
    new Promise((resolve) => {
      execFile(file, args, { cwd, env: { ...withoutColour(process.env), CI: 'true', NO_COLOR: '1', ...env, PATH: path }, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
}
