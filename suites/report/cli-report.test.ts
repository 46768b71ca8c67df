// The command line around the reports, as a user runs it: help for every command, a config file
// with flags over it, plain progress without a terminal and in-place redraw on one (a real pty from
// util-linux `script`), the closing summary table, --open, and exit code 2 for a bad config.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.ts';

const MAIN = join(packageRoot, 'src/cli/main.ts');
const ESC = String.fromCharCode(27);
const ENTRY = join(packageRoot, 'src/index.ts');

function exec(file: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { cwd: opts.cwd ?? packageRoot, env: { ...process.env, CI: '', ...opts.env }, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const zerodrop = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) => exec(process.execPath, [MAIN, ...args], opts);

/**
 * The exit code a run must have given its own verdict line: 0 for a pass, 1 when the harness, on a
 * machine busy with other work, called the run inconclusive (the exit code rule, not the report, is
 * what these tests check).
 */
function exitCodeOf(stdout: string): number {
  const plain = stdout.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '').replace(/\r/g, '\n');
  return /^INCONCLUSIVE backend-idle-exit/m.test(plain) ? 1 : 0;
}

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-cli-report-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('--help', () => {
  it.each([
    [['--help'], /^zerodrop: prove[\s\S]*zerodrop report DIR/],
    [['help', 'run'], /^zerodrop run: [\s\S]*--config[\s\S]*--reporter[\s\S]*--open/],
    [['run', '--help'], /^zerodrop run: /],
    [['list', '--help'], /^zerodrop list: /],
    [['report', '--help'], /^zerodrop report: [\s\S]*results\.json/],
  ])('%j prints that command\'s usage and exits 0', async (args, usage) => {
    const r = await zerodrop(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(usage);
  });
});

describe('zerodrop run with a config file', () => {
  it('rejects a bad config with exit 2, naming the field, value and what is allowed, before starting anything', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'zerodrop.config.ts'), `import { defineConfig } from '${ENTRY}';\nexport default defineConfig({ profiles: ['refrence'], reportDir: 'out' });\n`);
    const r = await zerodrop(['run'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/zerodrop\.config\.ts: profiles\[0\] = "refrence": unknown profile; allowed: reference,/);
    expect(r.stdout).toBe('');
    expect(await readdir(dir)).toEqual(['zerodrop.config.ts']);
  });

  it('runs what the config says, flags over it; without a terminal prints plain progress lines, a summary table, and opens the report', async () => {
    const dir = await tempDir();
    const opened = join(dir, 'opened.txt');
    const browser = join(dir, 'browser.sh');
    await writeFile(browser, `#!/bin/sh\necho "$1" > '${opened}'\n`);
    await chmod(browser, 0o755);
    await writeFile(
      join(dir, 'zerodrop.config.ts'),
      `import { defineConfig } from '${ENTRY}';\nexport default defineConfig({ scenarios: ['backend-idle-exit'], reportDir: 'from-config', reporters: ['json', 'html'], open: true, implementation: { organization: 'acme' } });\n`,
    );
    const r = await zerodrop(['run', '--report-dir', 'from-flag'], { cwd: dir, env: { BROWSER: browser } });
    expect(r.code, r.stdout + r.stderr).toBe(exitCodeOf(r.stdout));
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).toMatch(/^ {2}\[1\/1\] backend-idle-exit \[reference\] running: step delete: delete-pod · \d+\.\d s$/m);
    expect(r.stdout).toMatch(/^(PASS|INCONCLUSIVE) backend-idle-exit \[reference\] \d+\.\d s$/m);
    expect(r.stdout).toMatch(/^ +scenario +profile +sent +dropped +time\n(PASS|INCONCLUSIVE) +backend-idle-exit +reference +(0|[\d,]+ req) +0 +\d+\.\d s/m);
    expect(await readdir(join(dir, 'from-flag'))).toEqual(['index.html', 'records', 'results.json']);
    expect(existsSync(join(dir, 'from-config'))).toBe(false);
    const results = JSON.parse(await readFile(join(dir, 'from-flag', 'results.json'), 'utf8'));
    expect(results.implementation).toEqual({ organization: 'acme' });
    await expect.poll(() => existsSync(opened)).toBe(true);
    expect((await readFile(opened, 'utf8')).trim()).toBe(join(dir, 'from-flag', 'index.html'));
  });

  it('on a terminal redraws its status line in place', async () => {
    const dir = await tempDir();
    const command = `'${process.execPath}' '${MAIN}' run --scenario backend-idle-exit --reporter json --report-dir '${join(dir, 'out')}'`;
    const r = await exec('script', ['-qec', command, '/dev/null'], { env: { TERM: 'xterm', COLUMNS: '120' } });
    expect(r.code, r.stdout + r.stderr).toBe(exitCodeOf(r.stdout));
    expect(r.stdout).toContain('\x1b[?25l');
    expect(r.stdout).toMatch(new RegExp(`\r${ESC}\\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \\[1/1\\] backend-idle-exit \\[reference\\] running`));
    expect(r.stdout).toContain('\x1b[?25h');
    expect(r.stdout).toMatch(/(PASS|INCONCLUSIVE) backend-idle-exit \[reference\]/);
  });
});

describe('zerodrop report', () => {
  it('exits 2 when the directory has no results.json', async () => {
    const dir = await tempDir();
    const r = await zerodrop(['report', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'results.json')}: not found`);
  });
});
