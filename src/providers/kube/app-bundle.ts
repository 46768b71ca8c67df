// Reference apps that import npm packages beside node: built-ins (fixtures/reference-grpc.mjs:
// @grpc/grpc-js and @grpc/proto-loader) cannot run from the fixtures ConfigMap as they are: the
// stock Node image that runs it has no node_modules. Such an app travels as one self-contained ES
// module, the app, pod-env.mjs and the packages bundled by rolldown, under the app's own ConfigMap
// key, so the pod's command is the same `node fixtures/x.mjs`. What it reads at run time
// (drain.proto, found beside it through import.meta.url) travels beside it, unchanged.
//
// When it is built: rolldown is not a dependency of the package, only of vite under vitest, a
// development dependency here, so an installed package cannot bundle. `npm run build` (prepack)
// therefore writes the bundle into dist/, beside this module's build, and an installed package
// takes it from there. Run from src/ (this repository) there is none beside the module, and
// dist/ is not looked at, since an earlier build there may be stale: the run bundles on first need
// into the zerodrop cache (~0.5 s), keyed by what the bundle is made of, and reuses it afterwards.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE_GRPC } from '../../profiles/reference.ts';
import { cacheDir } from '../netns/go-module-build.ts';

/** Apps shipped bundled, by repository path, with the files each reads beside itself at run time. */
export const BUNDLED_APPS: Readonly<Record<string, { reads: readonly string[] }>> = {
  [REFERENCE_GRPC]: { reads: ['fixtures/drain.proto'] },
};

/** Where `npm run build` puts an app's bundle: beside this module in dist/, never in src/. */
export function prebuiltBundle(app: string, base: string = import.meta.url): string {
  return fileURLToPath(new URL(`./bundles/${basename(app)}`, base));
}

/**
 * The bundle of `app` (a repository path, read below `root`), made now. Minified: unminified the
 * gRPC app is ~0.9 MB, too near a ConfigMap's 1 MiB, which it shares with the other fixtures.
 */
export async function bundleApp(app: string, root: string): Promise<string> {
  let rolldown: typeof import('rolldown');
  try {
    rolldown = await import('rolldown');
  } catch (err) {
    throw new Error(`${app} runs on a cluster as a bundle, which this installation neither carries (${prebuiltBundle(app)}) nor can make (rolldown: ${(err as Error).message})`, { cause: err });
  }
  const built = await rolldown.build({
    input: join(root, app),
    platform: 'node',
    write: false,
    logLevel: 'warn',
    output: { format: 'esm', minify: true, codeSplitting: false },
  });
  const [chunk, ...rest] = built.output;
  if (!chunk || chunk.type !== 'chunk' || rest.length > 0) throw new Error(`bundling ${app} gave ${built.output.length} outputs, not one module`);
  return chunk.code;
}

/**
 * The cache key of a bundle: every top-level fixtures module (the app and the siblings it may
 * import), package-lock.json (which pins every bundled package) and rolldown's version.
 */
function bundleKey(app: string, root: string): string {
  const hash = createHash('sha256');
  const fixtures = join(root, 'fixtures');
  for (const name of readdirSync(fixtures).filter((f) => f.endsWith('.mjs')).sort()) hash.update(name).update(readFileSync(join(fixtures, name)));
  const lock = join(root, 'package-lock.json');
  if (existsSync(lock)) hash.update(readFileSync(lock));
  const rolldownPackage = join(root, 'node_modules', 'rolldown', 'package.json');
  if (existsSync(rolldownPackage)) hash.update(readFileSync(rolldownPackage));
  return `${basename(app, '.mjs')}-${hash.digest('hex').slice(0, 16)}.mjs`;
}

/** The bundle of `app`, as the pods get it: the package's prebuilt one, else a cached one, else bundled now into the cache. */
export async function appBundle(app: string, root: string): Promise<string> {
  const prebuilt = prebuiltBundle(app);
  if (existsSync(prebuilt)) return readFileSync(prebuilt, 'utf8');
  const cached = join(cacheDir(), 'app-bundles', bundleKey(app, root));
  if (existsSync(cached)) return readFileSync(cached, 'utf8');
  const code = await bundleApp(app, root);
  // Written under another name, then renamed: a concurrent run never reads half a bundle.
  mkdirSync(dirname(cached), { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  writeFileSync(partial, code);
  renameSync(partial, cached);
  return code;
}
