import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { configArgs, configFlag, defineConfig, loadConfig, validateConfig } from './config.ts';
import { parseRunArgs } from './args.ts';
import { UsageError } from './usage-error.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

function problem(input: unknown): string {
  try {
    validateConfig(input, 'zerodrop.config.ts');
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('zerodrop.config.ts', () => {
  it('accepts a full config', () => {
    const config = defineConfig({
      provider: 'local',
      profiles: ['reference', 'mutant-exit-on-sigterm'],
      scenarios: ['backend-delete-http'],
      set: { graceSeconds: 30 },
      nightly: false,
      reportDir: 'out',
      reporters: ['html', 'json'],
      open: false,
      implementation: { organization: 'acme', project: 'edge', contact: ['@acme'] },
    });
    expect(validateConfig(config, 'x')).toEqual(config);
  });

  it.each([
    [{ profiles: ['reference', 'nginx-typo'] }, /^zerodrop\.config\.ts: profiles\[1\] = "nginx-typo": unknown profile; allowed: reference, mutant-exit-on-sigterm/],
    [{ scenarios: ['no-such'] }, /scenarios\[0\] = "no-such": unknown scenario; allowed: backend-delete-http/],
    [{ provider: 'minikube' }, /provider = "minikube": unknown provider; allowed: local, netns, kind, k3s, cluster/],
    [{ nodes: 0 }, /nodes = 0: must be a whole number from 1 to 16/],
    [{ set: { graceSeconds: -1 } }, /set\.graceSeconds = -1: graceSeconds must be a whole number of seconds from 0 to 3600/],
    [{ set: { graceSeconds: 'soon' } }, /set\.graceSeconds = "soon": graceSeconds must be a whole number of seconds from 0 to 3600/],
    [{ set: { replicas: 2.5 } }, /set\.replicas = 2\.5: replicas must be a whole number from 1 to 20/],
    [{ set: { nosuch: 1 } }, /set\.nosuch = 1: no scenario has this option; options: (\w+, )*backends, /],
    [{ nightly: 'yes' }, /nightly = "yes": must be true or false/],
    [{ workers: 1.5 }, /workers = 1\.5: must be a whole number from 1 to 64/],
    [{ workers: 0 }, /workers = 0: must be a whole number from 1 to 64/],
    [{ workers: '2' }, /workers = "2": must be a whole number from 1 to 64/],
    [{ seed: -1 }, /seed = -1: must be a whole number from 0 to 4294967295/],
    [{ seed: 2 ** 32 }, /seed = 4294967296: must be a whole number from 0 to 4294967295/],
    [{ reporters: ['pdf'] }, /reporters\[0\] = "pdf": unknown reporter; allowed: json, html, junit, conformance/],
    [{ reportDir: ' ' }, /reportDir = " ": must not be empty/],
    [{ profile: ['reference'] }, /unknown field "profile"; allowed: provider, profiles, scenarios/],
    [{ implementation: { org: 'x' } }, /implementation: unknown field "org"; allowed: organization, project/],
  ])('rejects %j naming the field, its value and what is allowed', (input, message) => {
    expect(problem(input)).toMatch(message);
  });

  it('takes every name --profile takes, the ablated profiles included', () => {
    expect(validateConfig({ profiles: ['nginx-without-keepalive_time'] }, 'zerodrop.config.ts').profiles).toEqual(['nginx-without-keepalive_time']);
  });

  it('lists every bad field at once', () => {
    expect(problem({ provider: 'x', nightly: 1 }).split('\n')).toHaveLength(3);
  });

  it('is overridden by flags, field by field', () => {
    const config = defineConfig({ profiles: ['mutant-exit-on-sigterm'], scenarios: ['backend-idle-exit'], set: { graceSeconds: 9, replicas: 3 }, reportDir: 'from-config', nightly: true });
    const cli = ['--report-dir', 'from-flag', '--set', 'graceSeconds=3'];
    const args = parseRunArgs([...configArgs(config, cli), ...cli]);
    expect(args.reportDir).toBe('from-flag');
    expect(args.profiles.map((p) => p.name)).toEqual(['mutant-exit-on-sigterm']);
    expect(args.scenarios.map((s) => s.id)).toEqual(['backend-idle-exit']);
    expect(args.nightly).toBe(true);
    expect(args.overrides).toEqual({ graceSeconds: 3, replicas: 3 });
    expect(parseRunArgs(configArgs({ workers: 2 }, [])).workers).toBe(2);
    expect(parseRunArgs(configArgs({ seed: 7 }, [])).seed).toBe(7);
    expect(parseRunArgs([...configArgs({ workers: 2 }, ['--workers', '1']), '--workers', '1']).workers).toBe(1);
    const profileFlag = ['--profile', 'reference'];
    expect(parseRunArgs([...configArgs(config, profileFlag), ...profileFlag]).profiles.map((p) => p.name)).toEqual(['reference']);
  });

  it('is found in the working directory, or named with --config, and loaded as TypeScript', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-config-'));
    dirs.push(dir);
    expect(await loadConfig(undefined, dir)).toEqual({ config: {} });
    const entry = new URL('../index.ts', import.meta.url).href;
    await writeFile(
      join(dir, 'zerodrop.config.ts'),
      `import { defineConfig, type ZerodropConfig } from '${entry}';\nconst profiles: ZerodropConfig['profiles'] = ['reference'];\nexport default defineConfig({ profiles, reportDir: 'r' });\n`,
    );
    expect(await loadConfig(undefined, dir)).toEqual({ config: { profiles: ['reference'], reportDir: 'r' }, file: join(dir, 'zerodrop.config.ts') });
    await writeFile(join(dir, 'other.config.mjs'), `export default { scenarios: ['nope'] };\n`);
    await expect(loadConfig('other.config.mjs', dir)).rejects.toThrow(/other\.config\.mjs: scenarios\[0\] = "nope": unknown scenario/);
    await expect(loadConfig('missing.ts', dir)).rejects.toThrow('--config missing.ts: file not found');
    expect(configFlag(['--config', 'a.ts'])).toBe('a.ts');
    expect(configFlag(['--config=b.ts'])).toBe('b.ts');
  });

  // In a child Node process: vitest transforms what it imports itself, and would hide how Node loads it.
  it.each([
    ['zerodrop.config.ts', { type: 'commonjs' }],
    ['zerodrop.config.ts', { type: 'module' }],
    ['zerodrop.config.ts', {}],
    ['zerodrop.config.mts', { type: 'commonjs' }],
    ['zerodrop.config.mjs', { type: 'commonjs' }],
    ['zerodrop.config.js', { type: 'commonjs' }],
  ])('loads %s, and the files it imports, in a package of %j', async (name, type) => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-config-'));
    dirs.push(dir);
    const ts = name.endsWith('ts');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'adopter', version: '1.0.0', ...type }));
    await writeFile(join(dir, `scenarios.${ts ? 'ts' : 'mjs'}`), `export const scenarios${ts ? ': string[]' : ''} = ['backend-delete-http'];\n`);
    await writeFile(join(dir, name), `import { scenarios } from './scenarios.${ts ? 'ts' : 'mjs'}';\nexport default { profiles: ['reference'], scenarios };\n`);
    const loader = `import { loadConfig } from ${JSON.stringify(new URL('./config.ts', import.meta.url).href)};\nconsole.log(JSON.stringify((await loadConfig(undefined, ${JSON.stringify(dir)})).config));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', loader], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ profiles: ['reference'], scenarios: ['backend-delete-http'] });
  });

  it("gives its `import ... from 'zerodrop'` the zerodrop that loads it, whose registries then hold what it defines", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-config-'));
    dirs.push(dir);
    await mkdir(join(dir, 'chart'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'adopter', version: '1.0.0', type: 'module' }));
    await writeFile(
      join(dir, 'zerodrop.config.ts'),
      "import { defineConfig, defineHelmProfile } from 'zerodrop';\n" +
        "const gw = defineHelmProfile({ name: 'adopter-chart', description: 'd', chart: { chart: './chart' }, protocols: ['http'], terminationGracePeriodSeconds: 30 });\n" +
        'export default defineConfig({ profiles: [gw] });\n',
    );
    const loader =
      `import { loadConfig } from ${JSON.stringify(new URL('./config.ts', import.meta.url).href)};\n` +
      `import { helmProfileSpec } from ${JSON.stringify(new URL('../profiles/helm-charts.ts', import.meta.url).href)};\n` +
      `await loadConfig(undefined, ${JSON.stringify(dir)});\nconsole.log(helmProfileSpec('adopter-chart')?.name);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', loader], { cwd: dir });
    expect(stdout.trim()).toBe('adopter-chart');
  });
});
