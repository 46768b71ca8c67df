// `zerodrop clean` end to end in process: a crashed cluster run's record, a kubeconfig pointing at
// the fake API server, and what is deleted, printed and kept.

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';

import { FakeApiServer } from '../providers/kube/fake-api-server.ts';
import { LABELS } from '../providers/kube/manifests.ts';
import { runsDir } from '../state/run-record.ts';
import { clean } from './clean.ts';
import { UsageError } from './usage-error.ts';

let dir: string;
let server: FakeApiServer;
let lines: string[];
const saved = { ...process.env };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zerodrop-clean-cli-'));
  server = await new FakeApiServer().listen();
  const ns = { metadata: { name: 'zerodrop-dead0001', labels: { [LABELS.run]: 'dead0001' } }, status: { phase: 'Active' } };
  server.put('/api/v1/namespaces', ns);
  server.respond((req) => (req.method === 'GET' && req.path === '/api/v1/namespaces/zerodrop-dead0001' ? { status: 200, body: ns } : undefined));
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
  it('deletes the labelled namespaces of the current context, then the crashed run\'s record, printing each', async () => {
    expect(await clean([])).toBe(0);
    expect(server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toContain('/api/v1/namespaces/zerodrop-dead0001');
    expect(lines).toContain(`deleted namespace zerodrop-dead0001 (${LABELS.run}=dead0001)`);
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

  it('a second clean finds nothing left', async () => {
    expect(await clean([])).toBe(0);
    lines.length = 0;
    expect(await clean(['--local-only'])).toBe(0);
    expect(lines).toEqual(['0 thing(s) removed']);
  });
});
