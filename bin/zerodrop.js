#!/usr/bin/env node
// The `zerodrop` command. An installed package runs its build (dist/, JavaScript: Node does not strip
// types under node_modules); a checkout of the repository has src/ and runs it directly through
// Node's type stripping, so development needs no build step. Older Nodes get a clear message
// instead of a syntax error.
import { existsSync } from 'node:fs';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`zerodrop needs Node.js 22.18 or newer (this is ${process.version}); install a newer Node, or \`npm install --save-dev node@24\` so that npm scripts and npx run it`);
  process.exit(2);
}
const source = new URL('../src/cli/main.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/cli/main.js', import.meta.url).href);
