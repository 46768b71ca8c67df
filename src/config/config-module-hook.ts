// A config file is ESM (`import { defineConfig } from 'zerodrop'`), but the package it sits in may
// say otherwise: `npm init -y` writes `"type": "commonjs"` (npm 11), and Node then loads
// `zerodrop.config.ts` as CommonJS ("Cannot use import statement outside a module"). As Playwright
// and vitest load their TypeScript configs whatever the package type, zerodrop loads the config file,
// and the project's own files it imports, as ES modules when they are written as ES modules.

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
  const register = (nodeModule as { registerHooks?: (hooks: { load: LoadHook }) => unknown }).registerHooks;
  if (register === undefined || registeredFor !== undefined) return;
  registeredFor = projectDir;
  const root = projectDir.endsWith('/') ? projectDir : `${projectDir}/`;
  register({
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

type LoadResult = { format?: string; source?: string | ArrayBuffer | Uint8Array | null; shortCircuit?: boolean };
type LoadHook = (url: string, context: object, nextLoad: (url: string, context?: object) => LoadResult) => LoadResult;
