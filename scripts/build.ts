// `npm run build`: the published package's dist/, JavaScript and declarations emitted by tsc from
// src/ (tsconfig.build.json), plus the files the code reads beside itself (the HTML report's
// stylesheet and script), and the bundles of the reference apps that import npm packages
// (src/providers/kube/app-bundle.ts), which an installed package could not make. Then checks the output: a relative `.ts` specifier left in dist/ would
// fail only where the package is installed (Node does not strip types under node_modules).

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLED_APPS, bundleApp, prebuiltBundle } from '../src/providers/kube/app-bundle.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

/** Files under `dir`, recursively, as absolute paths. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Relative `.ts` specifiers in emitted JavaScript (static, dynamic and `export from`), by file. */
export function leftoverTsSpecifiers(js: string): string[] {
  const code = js.replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]+\.ts)\1/g)].map((m) => m[2] as string);
}

async function main(): Promise<number> {
  rmSync(dist, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const built = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (built.status !== 0) return built.status ?? 1;

  // Assets: what the code reads with readFileSync(new URL(..., import.meta.url)).
  const assets = filesUnder(src).filter((f) => /\.(css|js)$/.test(f) && !f.endsWith('.test.ts'));
  for (const file of assets) cpSync(file, join(dist, relative(src, file)));

  const bundles: string[] = [];
  for (const app of Object.keys(BUNDLED_APPS)) {
    const file = prebuiltBundle(app, pathToFileURL(join(dist, 'providers', 'kube', 'app-bundle.js')).href);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, await bundleApp(app, root));
    bundles.push(relative(root, file));
  }

  const problems: string[] = [];
  for (const file of filesUnder(dist).filter((f) => f.endsWith('.js'))) {
    for (const spec of leftoverTsSpecifiers(readFileSync(file, 'utf8'))) problems.push(`${relative(root, file)}: imports ${spec}`);
  }
  if (problems.length > 0) {
    console.error(`build: ${problems.length} relative .ts import(s) left in dist/ (tsc did not rewrite them; move the import out of the function it downlevels):\n  ${problems.join('\n  ')}`);
    return 1;
  }
  console.log(`build: ${relative(root, dist)}/ from ${relative(root, src)}/ (${assets.length} asset(s) copied: ${assets.map((a) => relative(src, a)).join(', ')}; bundled: ${bundles.join(', ')})`);
  return 0;
}

if (process.argv[1] === import.meta.filename) process.exitCode = await main();
