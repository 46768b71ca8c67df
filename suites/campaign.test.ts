// `zerodrop campaign` as a user runs it: a run whose verdict is not the one its pair must have keeps
// its whole report (results, HTML, records), and campaign.json and the log point at it; a run that
// came out as expected keeps its verdict only.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths.ts';
import type { CampaignRow } from '../src/cli/campaign.ts';
import type { RunResult } from '../src/report/results.ts';

const execFileAsync = promisify(execFile);
let dir = '';
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

// A backend its author calls drain-correct (a `system`: expected to pass) that has no SIGTERM handler,
// so it dies at the stop signal with requests in flight: every run of it is unexpected.
const config = (index: string) => `import { defineConfig, defineProfile } from ${JSON.stringify(index)};
const dies = defineProfile({
  name: 'dies-at-sigterm',
  role: 'backend',
  protocols: ['http'],
  description: 'Answers after 300 ms and has no SIGTERM handler.',
  command: ['node', '-e', "require('node:http').createServer((q, s) => setTimeout(() => s.end('ok'), 300)).listen(Number(process.env.PORT), process.env.POD_IP)"],
});
export default defineConfig({ profiles: ['reference', dies], scenarios: ['backend-delete-http'] });
`;

describe('zerodrop campaign', () => {
  it('keeps the report of a run that was not the expected verdict, and only of that one', { timeout: 180_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'zerodrop-campaign-test-'));
    await writeFile(join(dir, 'zerodrop.config.mjs'), config(pathToFileURL(join(packageRoot, 'src', 'index.ts')).href));
    const cli = join(packageRoot, 'src', 'cli', 'main.ts');
    const r = await execFileAsync(process.execPath, [cli, 'campaign', '--runs', '1', '--config', 'zerodrop.config.mjs', '--report-dir', 'out'], { cwd: dir, timeout: 170_000 }).then(
      (ok) => ({ code: 0, ...ok }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
    const output = `${r.stdout}\n${r.stderr}`;
    const campaign = JSON.parse(await readFile(join(dir, 'out', 'campaign.json'), 'utf8')) as { rows: CampaignRow[] };
    const row = (profile: string) => campaign.rows.find((x) => x.profile === profile)!;
    const dies = row('dies-at-sigterm');
    // A run the harness could not measure (a busy machine) is not the expected verdict either, and is kept alike.
    expect(dies.runs.map((x) => x.verdict), output).not.toContain('pass');
    const kept = join('runs', '1', 'local', 'backend-delete-http.dies-at-sigterm');
    expect(dies.runs[0]?.report).toBe(kept);
    expect(output).toContain(`[report: ${join('out', kept)}]`);
    expect((await readdir(join(dir, 'out', kept))).sort()).toEqual(['conformance.yaml', 'index.html', 'junit.xml', 'records', 'results.json']);
    const results = JSON.parse(await readFile(join(dir, 'out', kept, 'results.json'), 'utf8')) as RunResult;
    expect(results.scenarios.map((s) => [s.id, s.profile, s.verdict])).toEqual([['backend-delete-http', 'dies-at-sigterm', dies.runs[0]?.verdict]]);
    expect(results.scenarios[0]?.records?.requests).toMatch(/^records\/.*\.requests\.gz$/);
    // The reference came out as it must (or, on a busy machine, gave no verdict and is kept too).
    const reference = row('reference');
    const referenceKept = existsSync(join(dir, 'out', 'runs', '1', 'local', 'backend-delete-http.reference'));
    expect(referenceKept, output).toBe(reference.runs[0]?.verdict !== 'pass');
    expect(reference.runs[0]?.report !== undefined).toBe(referenceKept);
  });
});
