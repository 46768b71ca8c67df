#!/usr/bin/env node
// The CLI is TypeScript run by Node's built-in type stripping (Node 22.18+ and 24), so there is no
// build step. Older Nodes get a clear message instead of a syntax error.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`zerodrop needs Node.js 22.18 or newer (this is ${process.version}); run it through npm (npm start, npx zerodrop), which uses the Node 24 installed by npm ci`);
  process.exit(2);
}
await import('../src/cli/main.ts');
