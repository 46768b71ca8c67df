// `zerodrop clean` end to end in process: a crashed cluster run's record, a kubeconfig pointing at
// the fake API server, and what is deleted, printed and kept.

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';

import { FakeApiServer } from '../../test-support/fake-api-server.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { runsDir } from '../state/run-record.ts';
import { clean } from './clean.ts';
import { HELP } from './help.ts';
import { UsageError } from '../config/usage-error.ts';

let dir: string;
let server: FakeApiServer;
let lines: string[];
const saved = { ...process.env };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zerodrop-clean-cli-'));
  server = await new FakeApiServer().listen();
  const ns = { metadata: { name: 'zerodrop-dead0001', labels: { [LABELS.run]: 'dead0001' } }, status: { phase: 'Active' } };
  // No record on this machine, created a minute ago: another machine's run, maybe going right now.
  const other = { metadata: { name: 'zerodrop-other001', labels: { [LABELS.run]: 'other001' }, creationTimestamp: new Date(Date.now() - 60_000).toISOString() }, status: { phase: 'Active' } };
  server.put('/api/v1/namespaces', ns);
  server.put('/api/v1/namespaces', other);
  server.respond((req) => {
    const found = [ns, other].find((n) => req.path === `/api/v1/namespaces/${n.metadata.name}`);
    return req.method === 'GET' && found ? { status: 200, body: found } : undefined;
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
    }),
  );
  process.env['ZERODROP_STATE_DIR'] = join(dir, 'state');
  process.env['KUBECONFIG'] = kubeconfig;
  mkdirSync(runsDir(join(dir, 'state')), { recursive: true });
  // A run on the cluster provider that was SIGKILLed: pid 2^22 + 1 is above any pid_max default, so dead.
  writeFileSync(
    join(runsDir(join(dir, 'state')), 'crashed.json'),
    JSON.stringify({ version: 1, id: 'crashed', startedAt: '', zerodrop: { pid: 4_194_305, startTime: '1' }, groups: [], tempDirs: [], namespaces: ['zerodrop-dead0001'], kindClusters: [] }),
  );
  lines = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
});

afterEach(async () => {
  vi.restoreAllMocks();
  process.env = { ...saved };
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('zerodrop clean', () => {
  const namespaceDeletes = () => server.requests.filter((r) => r.method === 'DELETE' && /^\/api\/v1\/namespaces\/[^/]+$/.test(r.path)).map((r) => r.path.split('/').at(-1));

  it('deletes the crashed run\'s namespace on the current context and then its record, keeps another machine\'s young one, printing each', async () => {
    expect(await clean([])).toBe(0);
    expect(namespaceDeletes()).toEqual(['zerodrop-dead0001']);
    expect(lines).toContain(`deleted namespace zerodrop-dead0001 (${LABELS.run}=dead0001): its run on this machine ended without tearing down (record crashed)`);
    expect(lines).toContainEqual(expect.stringMatching(/^kept namespace zerodrop-other001: no finished run of this machine made it and it is 1m(\d+s)? old /));
    expect(lines.at(-1)).toBe('1 thing(s) removed');
    expect(readdirSync(runsDir(join(dir, 'state')))).toEqual([]);
  });

  it('with --local-only leaves the cluster alone and keeps the record that names its namespaces', async () => {
    expect(await clean(['--local-only'])).toBe(0);
    expect(server.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(lines).toContain(`kept record ${join(runsDir(join(dir, 'state')), 'crashed.json')}: its namespaces (zerodrop-dead0001) were not looked for`);
    expect(readdirSync(runsDir(join(dir, 'state')))).toEqual(['crashed.json']);
  });

  it('rejects bad flags and an unknown --context as usage errors (exit 2)', async () => {
    await expect(clean(['--context', 'nope'])).rejects.toThrow(UsageError);
    await expect(clean(['--context', 'nope'])).rejects.toThrow(/context nope is not in/);
    await expect(clean(['--bogus'])).rejects.toThrow(/clean: unknown flag --bogus/);
    await expect(clean(['--dry-run=yes'])).rejects.toThrow(UsageError);
    await expect(clean(['--local-only', '--context', 'ctx'])).rejects.toThrow(/exclude each other/);
    expect(server.requests).toEqual([]);
  });

  it('--older-than and --all widen what goes; --dry-run says which rule', async () => {
    expect(await clean(['--dry-run', '--older-than', '30s'])).toBe(0);
    expect(lines.filter((l) => l.startsWith('would delete'))).toEqual([
      `would delete namespace zerodrop-dead0001 (${LABELS.run}=dead0001): its run on this machine ended without tearing down (record crashed)`,
      expect.stringMatching(new RegExp(`^would delete namespace zerodrop-other001 \\(${LABELS.run}=other001\\): created 1m\\d*s? ago, older than 30s$`)),
    ]);
    expect(namespaceDeletes()).toEqual([]);
    expect(await clean(['--older-than', '2h'])).toBe(0);
    expect(namespaceDeletes()).toEqual(['zerodrop-dead0001']);
    expect(lines).toContainEqual(expect.stringMatching(/^kept namespace zerodrop-other001: .*--older-than 2h or --all deletes it\)$/));
    // The fake keeps listing a deleted namespace: this time only --all accounts for either.
    expect(await clean(['--all'])).toBe(0);
    expect(namespaceDeletes()).toEqual(['zerodrop-dead0001', 'zerodrop-dead0001', 'zerodrop-other001']);
    expect(lines).toContain(`deleted namespace zerodrop-other001 (${LABELS.run}=other001): --all`);
  });

  it.each<[string[], RegExp]>([
    [['--older-than', '2x'], /^--older-than "2x": expected a duration like 30m, 2h, 1h30m or 7d \(whole numbers of s, m, h, d\)$/],
    [['--older-than', '1.5h'], /^--older-than "1.5h": expected a duration like/],
    [['--older-than', '-2h'], /^clean: --older-than expects a value/],
    [['--older-than', '0h'], /^--older-than "0h": must be longer than 0$/],
    [['--older-than', ''], /^--older-than "": expected a duration/],
    [['--older-than'], /^clean: --older-than expects a value, e.g. --older-than <value>$/],
    [['--all=yes'], /^clean: --all is a switch and takes no value$/],
    [['--all', '--older-than', '2h'], /^clean: --all and --older-than exclude each other/],
    [['--local-only', '--all'], /^clean: --local-only and --all\/--older-than exclude each other/],
    [['--local-only', '--older-than', '2h'], /^clean: --local-only and --all\/--older-than exclude each other/],
    [['--bogus'], /^clean: unknown flag --bogus; flags: .*--older-than <value>, --all$/],
  ])('rejects %j with one line naming the flag (exit 2), before touching anything', async (argv, message) => {
    const error = await clean(argv).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
    expect(server.requests).toEqual([]);
    expect(readdirSync(runsDir(join(dir, 'state')))).toEqual(['crashed.json']);
  });

  it('its help names the new flags and the three rules', () => {
    for (const text of ['--older-than', '--all', '(default 24h', '(a)', '(b)', '(c)']) expect(HELP.clean).toContain(text);
  });

  it('a crashed run\'s Helm release: with no helm its namespace and record stay (exit 1); once helm is there, clean uninstalls it, then deletes both', async () => {
    server.put('/api/v1/namespaces/zerodrop-dead0001/secrets', {
      type: 'helm.sh/release.v1',
      metadata: { name: 'sh.helm.release.v1.eg-dead0001.v1', labels: { owner: 'helm', name: 'eg-dead0001', status: 'deployed', version: '1' } },
    });
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    process.env['PATH'] = bin;
    expect(await clean([])).toBe(1);
    expect(namespaceDeletes()).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^kept namespace zerodrop-dead0001: Helm release eg-dead0001 in it cannot be uninstalled, helm is not on PATH \(install helm and run zerodrop clean again/));
    expect(lines).toContain(`kept record ${join(runsDir(join(dir, 'state')), 'crashed.json')} (1 leftover(s) could not be removed)`);
    expect(lines.at(-1)).toBe('0 thing(s) removed; 1 could not be');
    expect(readdirSync(runsDir(join(dir, 'state')))).toEqual(['crashed.json']);

    const argv = join(dir, 'helm-argv.log');
    // It answers `helm version --short` as Helm 3 (helm.ts refuses others), unlogged.
    writeFileSync(join(bin, 'helm'), `#!/bin/sh\nif [ "$1" = version ]; then echo v3.20.2+g8fb76d6; exit 0; fi\nprintf '%s %s\\n' "$HELM_DRIVER" "$*" >> '${argv}'\n`);
    chmodSync(join(bin, 'helm'), 0o755);
    lines.length = 0;
    expect(await clean([])).toBe(0);
    expect(readFileSync(argv, 'utf8')).toMatch(/^secret uninstall eg-dead0001 --namespace zerodrop-dead0001 --kubeconfig \S+ --wait\n$/);
    expect(namespaceDeletes()).toEqual(['zerodrop-dead0001']);
    expect(lines.slice(0, 2)).toEqual([
      'uninstalled Helm release eg-dead0001 of namespace zerodrop-dead0001',
      `deleted namespace zerodrop-dead0001 (${LABELS.run}=dead0001): its run on this machine ended without tearing down (record crashed)`,
    ]);
    expect(lines.at(-1)).toBe('2 thing(s) removed');
    expect(readdirSync(runsDir(join(dir, 'state')))).toEqual([]);
  });

  it('a second clean finds nothing left', async () => {
    expect(await clean([])).toBe(0);
    lines.length = 0;
    expect(await clean(['--local-only'])).toBe(0);
    expect(lines).toEqual(['0 thing(s) removed']);
  });
});
