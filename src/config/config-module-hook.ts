// A config file is ESM (`import { defineConfig } from 'zerodrop'`), but the package it sits in may
// say otherwise: `npm init -y` writes `"type": "commonjs"` (npm 11), and Node then loads
// `zerodrop.config.ts` as CommonJS ("Cannot use import statement outside a module"). As Playwright
// and vitest load their TypeScript configs whatever the package type, zerodrop loads the config file,
// and the project's own files it imports, as ES modules when they are written as ES modules.
//
// And its `import ... from 'zerodrop'` is the zerodrop that runs it: a config defines profiles into
// that zerodrop's registries (a chart profile's spec, a defined profile's mark), which another copy
// (a checkout's unbuilt dist/, a project's own install beside a global one) would keep to itself.

import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

/** An `import` or `export` statement at the start of a line: the file is written as an ES module. */
const ESM_SYNTAX = /^\s*(import\s*[\w*{'"]|export\s)/m;

/** The ES module format of a CommonJS format (`commonjs-typescript` -> `module-typescript`), if any. */
const AS_MODULE: Record<string, string> = { commonjs: 'module', 'commonjs-typescript': 'module-typescript' };

let registeredFor: string | undefined;

/**
 * From now on, files under `projectDir` (not under node_modules) that Node would load as CommonJS
 * but are written as ES modules load as ES modules. Registered once per process.
 */
export function loadProjectFilesAsModules(projectDir: string): void {
  // module.registerHooks is Node 22.15+ (zerodrop needs 22.18); typed loosely for older @types/node.
  const register = (nodeModule as { registerHooks?: (hooks: { load: LoadHook; resolve: ResolveHook }) => unknown }).registerHooks;
  if (register === undefined || registeredFor !== undefined) return;
  registeredFor = projectDir;
  const root = projectDir.endsWith('/') ? projectDir : `${projectDir}/`;
  register({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : undefined;
      if (specifier !== 'zerodrop' || parent === undefined || !parent.startsWith(root) || parent.includes('/node_modules/')) return nextResolve(specifier, context);
      return { url: SELF, shortCircuit: true };
    },
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      const format = loaded.format === undefined ? undefined : AS_MODULE[loaded.format];
      if (format === undefined || !url.startsWith('file:')) return loaded;
      const path = fileURLToPath(url);
      if (!path.startsWith(root) || path.includes('/node_modules/')) return loaded;
      const source = loaded.source ?? readFileSync(path);
      const text = typeof source === 'string' ? source : Buffer.from(source as Uint8Array).toString('utf8');
      return ESM_SYNTAX.test(text) ? { ...loaded, format, source } : loaded;
    },
  });
}

/** This zerodrop's package entry: src/index.ts in a checkout, dist/index.js when built (beside this file's directory either way). */
const SELF = new URL(`../index${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

type ResolveResult = { url: string; format?: string; shortCircuit?: boolean };
type ResolveHook = (specifier: string, context: { parentURL?: string }, nextResolve: (specifier: string, context?: object) => ResolveResult) => ResolveResult;
type LoadResult = { format?: string; source?: string | ArrayBuffer | Uint8Array | null; shortCircuit?: boolean };
type LoadHook = (url: string, context: object, nextLoad: (url: string, context?: object) => LoadResult) => LoadResult;
