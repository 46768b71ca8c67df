// Where zerodrop's own files are, the same from this repository (src/, run by Node's type stripping)
// and from an installed package (dist/, built by tsc): both sit one level below the package root,
// beside fixtures/. Never the working directory: a user runs zerodrop from their own project.

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: pods run with it as their working directory so fixture paths resolve. */
export const packageRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * A module beside `base` (the caller's import.meta.url) with the caller's own extension, for
 * worker threads: `.ts` in the sources, `.js` in the build (tsc rewrites import specifiers, not URLs).
 */
export function siblingModule(name: string, base: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(base))}`, base);
}

/** This package's version, from its package.json (the one contract for it: results.json's `tool.version`). */
export const TOOL_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
