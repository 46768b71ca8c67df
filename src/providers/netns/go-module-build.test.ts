// One set of sources built at two pins (`go build -modfile`), each into a cache directory of its own:
// how kubernetes/v1.36/go.mod is built beside kubernetes/go.mod. A module without requirements, so
// no network; skipped without Go.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { goModulePrograms, type GoModule } from './go-module-build.ts';

const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasGo)('go-module-build with -modfile', () => {
  const root = mkdtempSync(join(tmpdir(), 'zerodrop-modfile-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'src');
  mkdirSync(join(dir, 'old'), { recursive: true });
  // The module path tells the two apart in the binary; kubernetes/'s pins differ in their requirements.
  writeFileSync(join(dir, 'go.mod'), 'module example.test/hello\n\ngo 1.22\n');
  writeFileSync(join(dir, 'old', 'go.mod'), 'module example.test/hello-old\n\ngo 1.22\n');
  for (const sum of ['go.sum', 'old/go.sum']) writeFileSync(join(dir, sum), '');
  writeFileSync(join(dir, 'main.go'), 'package main\n\nimport "fmt"\n\nvar pin = "none"\n\nfunc main() { fmt.Println(pin) }\n');
  const mod = (pin: string, modfile?: string): GoModule => ({
    dir,
    ...(modfile ? { modfile } : {}),
    cacheName: 'hello',
    keyFiles: [modfile ?? 'go.mod', (modfile ?? 'go.mod').replace(/\.mod$/, '.sum'), 'main.go'],
    pin,
    outputs: [{ output: 'hello', pkg: '.' }],
    ldflags: `-X main.pin=${pin}`,
    parallelism: 1,
    nice: true,
    describe: 'hello',
  });

  it('builds each pin from the same main.go into a directory of its own', async () => {
    const saved = process.env['ZERODROP_CACHE_DIR'];
    process.env['ZERODROP_CACHE_DIR'] = join(root, 'cache');
    try {
      const current = await goModulePrograms(mod('v2'));
      const old = await goModulePrograms(mod('v1', 'old/go.mod'));
      expect(current).toMatch(/\/hello\/v2-[0-9a-f]{12}$/);
      expect(old).toMatch(/\/hello\/v1-[0-9a-f]{12}$/);
      expect((await execa(join(current, 'hello'))).stdout).toBe('v2');
      expect((await execa(join(old, 'hello'))).stdout).toBe('v1');
      // Each was built with its own go.mod: the module path is in the binary's build information.
      expect((await execa('go', ['version', '-m', join(current, 'hello')])).stdout).toMatch(/^\tpath\texample\.test\/hello$/m);
      expect((await execa('go', ['version', '-m', join(old, 'hello')])).stdout).toMatch(/^\tpath\texample\.test\/hello-old$/m);
    } finally {
      if (saved === undefined) delete process.env['ZERODROP_CACHE_DIR'];
      else process.env['ZERODROP_CACHE_DIR'] = saved;
    }
  }, 180_000);
});
