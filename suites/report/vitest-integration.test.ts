// The suites report through vitest as usual and also write one zerodrop report of the run:
// a nested vitest run of one scenario file must leave index.html, results.json, junit.xml and
// conformance.yaml with that file's scenario results.

import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { RunResult } from '../../src/report/results.ts';
import { packageRoot } from '../../src/paths.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('a vitest run of the suites writes the zerodrop report of the scenarios it ran', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-vitest-report-'));
  dirs.push(dir);
  const vitest = join(packageRoot, 'node_modules', 'vitest', 'vitest.mjs');
  const output = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [vitest, 'run', 'suites/scenarios/backend-idle-exit.test.ts'],
      { cwd: packageRoot, env: { ...process.env, ZERODROP_VITEST_REPORT_DIR: dir, CI: 'true' }, timeout: 100_000 },
      // The suite's own verdicts do not matter here (a busy machine can make one inconclusive): the
      // report must be written either way; only a run that never finished is an error.
      (error, stdout, stderr) => (error && error.killed ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
    );
  });
  expect(output).toContain(`zerodrop report of this run`);
  expect((await readdir(dir)).sort()).toEqual(['conformance.yaml', 'index.html', 'junit.xml', 'records', 'results.json']);
  const run = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as RunResult;
  expect(run.scenarios.length).toBeGreaterThan(0);
  expect(new Set(run.scenarios.map((s) => s.id))).toEqual(new Set(['backend-idle-exit']));
  expect(await readFile(join(dir, 'index.html'), 'utf8')).toContain('backend-idle-exit');
}, 110_000);
