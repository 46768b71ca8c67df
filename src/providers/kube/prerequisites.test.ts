// The installed kind's version against the release zerodrop's node images are built for: read from
// a stand-in `kind` on PATH, since this machine has no kind.

import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_VERSION } from '../node-images.ts';
import { missingPrerequisites } from '../index.ts';
import { kindVersionProblem, kindVersionVerdict } from './prerequisites.ts';

describe('the kind version check', () => {
  it('accepts the pinned release, warns on a newer one, refuses an older one or a pre-release, with the install hint', () => {
    expect(KIND_VERSION).toBe('v0.33.0');
    expect(kindVersionVerdict('kind v0.33.0 go1.25.3 linux/amd64')).toEqual({});
    expect(kindVersionVerdict('0.33.0')).toEqual({});
    expect(kindVersionVerdict('kind v0.34.1 go1.26.0 linux/amd64')).toEqual({ warn: expect.stringMatching(/kind v0\.34\.1 is newer than v0\.33\.0.*best effort/) as unknown });
    expect(kindVersionVerdict('kind v1.0.0 go1.26.0 linux/amd64').warn).toMatch(/newer/);
    for (const old of ['kind v0.32.0 go1.25.1 linux/amd64', 'kind v0.9.0 go1.15 linux/amd64', 'kind v0.33.0-alpha.12+0123456789abcd go1.25.3 linux/amd64']) {
      const verdict = kindVersionVerdict(old);
      expect(verdict.warn).toBeUndefined();
      expect(verdict.refuse).toMatch(/older than v0\.33\.0.*install kind v0\.33\.0: go install sigs\.k8s\.io\/kind@v0\.33\.0.*kind\.sigs\.k8s\.io\/dl\/v0\.33\.0\/kind-linux-amd64/);
    }
    expect(kindVersionVerdict('something else').warn).toMatch(/could not read kind's version/);
  });

  describe('through `kind version`', () => {
    let dir: string;
    let savedPath: string | undefined;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'zerodrop-fake-kind-'));
      savedPath = process.env['PATH'];
      process.env['PATH'] = `${dir}${delimiter}${savedPath ?? ''}`;
    });
    afterEach(async () => {
      process.env['PATH'] = savedPath;
      await rm(dir, { recursive: true, force: true });
    });
    const fakeKind = async (script: string) => {
      await writeFile(join(dir, 'kind'), `#!/bin/sh\n${script}\n`);
      await chmod(join(dir, 'kind'), 0o755);
    };

    it('reads the installed kind', async () => {
      await fakeKind('[ "$1" = version ] && echo "kind v0.31.0 go1.25.5 linux/amd64"');
      expect((await kindVersionProblem()).refuse).toMatch(/kind v0\.31\.0 is older than v0\.33\.0/);
      await fakeKind('[ "$1" = version ] && echo "kind v0.33.0 go1.25.5 linux/amd64"');
      expect(await kindVersionProblem()).toEqual({});
      await fakeKind('echo broken >&2; exit 3');
      expect((await kindVersionProblem()).refuse).toMatch(/`kind version` failed.*install kind v0\.33\.0/);
    });

    it('is one of `--provider kind`\'s prerequisites (a refusal is a line of the exit-2 message, a warning goes to the caller)', async () => {
      await fakeKind('[ "$1" = version ] && echo "kind v0.32.0 go1.25.5 linux/amd64"');
      expect((await missingPrerequisites({ name: 'kind' })).join('\n')).toMatch(/kind v0\.32\.0 is older than v0\.33\.0/);
      await fakeKind('[ "$1" = version ] && echo "kind v0.34.0 go1.25.5 linux/amd64"');
      const warned: string[] = [];
      expect((await missingPrerequisites({ name: 'kind' }, (line) => warned.push(line))).join('\n')).not.toMatch(/kind v0/);
      expect(warned).toEqual([expect.stringMatching(/kind v0\.34\.0 is newer/)]);
    });
  });
});
