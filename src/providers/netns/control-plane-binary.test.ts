// Which releases the netns cluster can run: every go.mod under kubernetes/ that pins one, each
// built from the same main.go into a cache directory of its own.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKey } from './go-module-build.ts';
import { controlPlaneModule, controlPlanePin, controlPlanePins, netnsKubeVersionProblem } from './control-plane-binary.ts';

/** A kubernetes/ with a go.mod per release, as pin.sh writes them (only the require line matters here). */
function moduleDir(defaultPin: string, others: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'zerodrop-pins-'));
  const write = (sub: string, version: string): void => {
    mkdirSync(join(dir, sub), { recursive: true });
    writeFileSync(join(dir, sub, 'go.mod'), `module zerodrop.dev/kubernetes\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes ${version}\n`);
    writeFileSync(join(dir, sub, 'go.sum'), `${version}\n`);
  };
  write('.', defaultPin);
  for (const [sub, version] of Object.entries(others)) write(sub, version);
  writeFileSync(join(dir, 'main.go'), 'package main\n');
  return dir;
}

describe('control-plane pins', () => {
  const dir = moduleDir('v1.37.2', { 'v1.35': 'v1.35.4', 'v1.36': 'v1.36.3' });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the default first, then the other minors newest first', () => {
    expect(controlPlanePins(dir)).toEqual([
      { version: 'v1.37.2', modfile: 'go.mod' },
      { version: 'v1.36.3', modfile: 'v1.36/go.mod' },
      { version: 'v1.35.4', modfile: 'v1.35/go.mod' },
    ]);
  });

  it('finds a pin by release or by minor, with or without the v', () => {
    expect(controlPlanePin('v1.36.3', dir)?.modfile).toBe('v1.36/go.mod');
    expect(controlPlanePin('1.36.3', dir)?.modfile).toBe('v1.36/go.mod');
    expect(controlPlanePin('1.35', dir)?.version).toBe('v1.35.4');
    expect(controlPlanePin('v1.37', dir)?.modfile).toBe('go.mod');
    expect(controlPlanePin('v1.36.2', dir)).toBeUndefined();
    expect(controlPlanePin('1.3', dir)).toBeUndefined();
    expect(controlPlanePin('latest', dir)).toBeUndefined();
  });

  it('names the pinned releases when asked for another', () => {
    expect(netnsKubeVersionProblem('v1.36.3', dir)).toBeUndefined();
    expect(netnsKubeVersionProblem('v1.34.1', dir)).toBe('netns has no control plane pinned for Kubernetes v1.34.1; pinned: v1.37.2 (default), v1.36.3, v1.35.4 (kubernetes/pin.sh pins another)');
  });

  it('builds another minor from the same main.go with -modfile, into a cache directory of its own', async () => {
    const byDefault = controlPlaneModule(dir);
    const older = controlPlaneModule(dir, '1.36');
    expect(byDefault).toMatchObject({ pin: 'v1.37.2', keyFiles: ['go.mod', 'go.sum', 'main.go'] });
    expect(byDefault.modfile).toBeUndefined();
    expect(older).toMatchObject({ pin: 'v1.36.3', modfile: 'v1.36/go.mod', keyFiles: ['v1.36/go.mod', 'v1.36/go.sum', 'main.go'] });
    expect(older.ldflags).toContain('-X k8s.io/component-base/version.gitVersion=v1.36.3');
    expect(await buildKey(older)).toMatch(/^v1\.36\.3-[0-9a-f]{12}$/);
    expect(() => controlPlaneModule(dir, 'v1.33.0')).toThrow(/no control plane pinned for Kubernetes v1\.33\.0/);
  });

  it("the package's own pins: the default v1.37.2, and the two minors before it", () => {
    expect(controlPlanePins().map((p) => p.version)).toEqual(['v1.37.2', 'v1.36.3', 'v1.35.4']);
  });
});
