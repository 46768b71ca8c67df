// What zerodrop exposes and what it may destroy:
// (a) every socket it or its pods listen on (TCP) or bind (UDP) is on loopback, during real runs of
//     the HTTP gateway scenario on the reference gateway, nginx, haproxy and caddy and the TURN
//     scenario on coturn;
// (b) the local provider's Kubernetes API is read-only: writes get 405 and a Status, and change nothing;
// (c) on a cluster, deletes go only to what carries the run's label (the run's namespace);
// (d) credentials (a TURN password, a kubeconfig token) planted for a run never appear in its
//     console output or in results.json, index.html, junit.xml or conformance.yaml.

import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Recorder } from '../src/observe/recorder.ts';
import { redact, registerSecret } from '../src/observe/redact.ts';
import { KubeClient } from '../src/providers/kube/client.ts';
import { deleteRunNamespace } from '../src/providers/kube/apply.ts';
import { FakeApiServer } from '../test-support/fake-api-server.ts';
import { LocalApiServer, NAMESPACE } from '../src/providers/local/api-server.ts';
import { EndpointStore } from '../src/providers/local/endpoints.ts';
import { reporters, writeReports, REPORTER_NAMES } from '../src/report/reporters/index.ts';
import type { RunResult } from '../src/report/results.ts';
import { leftoverProcesses } from './helpers/leftovers.ts';

const MAIN = resolve('src/cli/main.ts');
const REPORT_FILES = ['results.json', 'index.html', 'junit.xml', 'conformance.yaml'];

let scratch = '';
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'zerodrop-security-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

interface BoundSocket {
  proto: 'tcp' | 'tcp6' | 'udp' | 'udp6';
  address: string;
  port: number;
  program: string;
}

/** /proc/net's hex address: IPv4 is one little-endian word; IPv6 is four, each little-endian. */
function decodeAddress(hex: string): string {
  const word = (w: string) => (w.match(/../g) ?? []).reverse();
  if (hex.length === 8) return word(hex).map((b) => parseInt(b, 16)).join('.');
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap(word);
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(parseInt(`${bytes[i]}${bytes[i + 1]}`, 16).toString(16));
  return groups.join(':');
}

/** Listening TCP sockets and every UDP socket, by inode. */
async function socketTable(): Promise<Map<string, Omit<BoundSocket, 'program'>>> {
  const table = new Map<string, Omit<BoundSocket, 'program'>>();
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    const text = await readFile(`/proc/net/${proto}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const [local, state, inode] = [cols[1], cols[3], cols[9]];
      if (local === undefined || inode === undefined) continue;
      if (proto.startsWith('tcp') && state !== '0A') continue; // LISTEN only: outgoing connections are not listeners
      const [hexAddr = '', hexPort = ''] = local.split(':');
      table.set(inode, { proto, address: decodeAddress(hexAddr), port: parseInt(hexPort, 16) });
    }
  }
  return table;
}

/** The listening TCP and bound UDP sockets the given processes hold right now. */
async function boundSocketsOf(pids: readonly number[]): Promise<BoundSocket[]> {
  const table = await socketTable();
  const found: BoundSocket[] = [];
  for (const pid of pids) {
    const program = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const inode = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))?.[1];
      const socket = inode ? table.get(inode) : undefined;
      if (socket) found.push({ ...socket, program });
    }
  }
  return found;
}


/** 127.0.0.0/8, ::1, or an IPv4-mapped 127.x. */
function isLoopback(address: string): boolean {
  if (/^127\./.test(address)) return true;
  if (address === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^0:0:0:0:0:ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(address);
  return mapped !== null && parseInt(mapped[1] ?? '0', 16) >> 8 === 127;
}

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('(a) every listener is on loopback', () => {
  it('the socket check sees a listener on all interfaces (control)', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const mine = (await boundSocketsOf([process.pid])).filter((s) => s.port === port);
      expect(mine).toHaveLength(1);
      expect(isLoopback(mine[0]?.address ?? '')).toBe(false);
    } finally {
      server.close();
    }
    expect(isLoopback('127.4.5.6')).toBe(true);
    expect(isLoopback(decodeAddress('0100007F'))).toBe(true);
    expect(decodeAddress('00000000000000000000000001000000')).toBe('0:0:0:0:0:0:0:1');
    expect(isLoopback(decodeAddress('0000000000000000FFFF00000100007F'))).toBe(true);
    expect(isLoopback(decodeAddress('00000000000000000000000000000000'))).toBe(false);
  });

  // Every gateway program zerodrop drives, where installed (a missing one is skipped, not failed).
  const installed = [
    ['nginx', 'nginx'],
    ['haproxy', 'haproxy'],
    ['caddy', 'caddy'],
    ['coturn', 'turnserver'],
  ].filter(([, binary]) => hasCommand(binary ?? ''));
  const profiles = ['reference', ...installed.map(([profile]) => profile ?? '')];
  const turnSecret = `turn-${randomUUID()}`;
  let run: { code: number | null; stdout: string; stderr: string; dir: string; sockets: BoundSocket[]; samples: number };

  beforeAll(async () => {
    const dir = await mkdtemp(join(scratch, 'run-'));
    const mark = randomUUID();
    // Verdicts are not the point: the shortest gateway scenario, two at once, listens on everything
    // a gateway run listens on (gateway and backend pods, balancer, API server) in half the time.
    const args = ['run', '--scenario', 'gateway-delete-http-no-keepalive', '--scenario', 'gateway-delete-turn', '--workers', '2', ...profiles.flatMap((p) => ['--profile', p]), '--report-dir', dir];
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ZERODROP_TEST_MARK: mark, ZERODROP_TURN_PASSWORD: turnSecret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let done = false;
    void exited.then(() => (done = true));
    const seen = new Map<string, BoundSocket>();
    let samples = 0;
    // Sample all through the run: listeners come and go with pods and scenarios.
    while (!done) {
      for (const s of await boundSocketsOf(await leftoverProcesses(mark))) seen.set(`${s.proto} ${s.address}:${s.port} ${s.program}`, s);
      samples++;
      await new Promise((r) => setTimeout(r, 200));
    }
    run = { code: await exited, stdout, stderr, dir, sockets: [...seen.values()], samples };
  }, 150_000);

  it(`during a local run (gateway-delete-http-no-keepalive, gateway-delete-turn on ${profiles.join(', ')}), zerodrop and its pods bind 127.0.0.0/8 only`, () => {
    // Verdicts are not the point here (a busy machine may make one inconclusive); the run must have run.
    expect([0, 1], run.stdout.split('\n').filter((l) => !l.startsWith('  [')).join('\n') + run.stderr).toContain(run.code);
    expect(run.stdout).toMatch(/^(PASS|FAIL|INCONCLUSIVE) gateway-delete-http-no-keepalive \[reference\]/m);
    expect(run.samples).toBeGreaterThan(5);
    const programs = new Set(run.sockets.map((s) => s.program));
    // The run really listened: the harness (balancer, API), the reference gateway and backends (node).
    expect(programs.has('node') || programs.has('MainThread')).toBe(true);
    for (const [profile, binary] of installed) if (profile !== 'coturn') expect(programs, profile).toContain(binary);
    if (profiles.includes('coturn')) expect(run.sockets.some((s) => s.program === 'turnserver' && s.proto === 'udp')).toBe(true);
    expect(run.sockets.some((s) => s.proto.startsWith('udp'))).toBe(true);
    expect(run.sockets.filter((s) => !isLoopback(s.address))).toEqual([]);
  });

  it('(d) the planted TURN password appears in no console output and no report file', async () => {
    expect(run.stdout).toContain('results:');
    // The planted password was the one in use: coturn and the TURN client authenticated with it.
    if (profiles.includes('coturn')) expect(run.stdout).toMatch(/^(PASS|INCONCLUSIVE) gateway-delete-turn \[coturn\]/m);
    const texts = [run.stdout, run.stderr, ...(await Promise.all(REPORT_FILES.map((f) => readFile(join(run.dir, f), 'utf8'))))];
    for (const text of texts) expect(text).not.toContain(turnSecret);
  });
});

describe('(b) the local API server is read-only', () => {
  it('answers POST, PUT, PATCH and DELETE with 405 and a Status, and changes nothing', async () => {
    const server = new LocalApiServer({ host: '127.0.0.1' });
    const address = await server.listen();
    const store = new EndpointStore({ name: 'backend', selector: 'backend', ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }], programmingDelayMs: 0 }, new Recorder());
    server.addService(store);
    const base = `http://${address.host}:${address.port}`;
    const slices = `/apis/discovery.k8s.io/v1/namespaces/${NAMESPACE}/endpointslices`;
    const endpoints = `/api/v1/namespaces/${NAMESPACE}/endpoints`;
    try {
      const before = await Promise.all([slices, endpoints].map(async (p) => (await fetch(base + p)).text()));
      expect(JSON.parse(before[0] ?? '{}').items).toHaveLength(1);
      const sliceName = (JSON.parse(before[0] ?? '{}') as { items: { metadata: { name: string } }[] }).items[0]?.metadata.name;
      const targets = [slices, `${slices}/${sliceName}`, endpoints, `${endpoints}/backend`, `/api/v1/namespaces/${NAMESPACE}/pods`, '/api/v1/namespaces'];
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        for (const path of targets) {
          const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'x' } }) });
          expect(res.status, `${method} ${path}`).toBe(405);
          const body = (await res.json()) as { kind: string; status: string; code: number; reason: string };
          expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: 405, reason: 'MethodNotAllowed' });
        }
      }
      const after = await Promise.all([slices, endpoints].map(async (p) => (await fetch(base + p)).text()));
      expect(after).toEqual(before);
    } finally {
      await server.close();
    }
  });
});

describe('(c) cluster deletes reach only what carries the run label', () => {
  const RUN = 'c0ffee01';
  const NS = `zerodrop-${RUN}`;

  async function fakeWithNamespace(labels: Record<string, string>) {
    const fake = await new FakeApiServer().listen();
    fake.respond((r) => {
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`) return { status: 200, body: { metadata: { name: NS, labels } } };
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/services`) return { status: 200, body: { items: [] } };
      if (r.method === 'DELETE') return { status: 200, body: {} };
      return undefined;
    });
    return fake;
  }

  it('teardown deletes inside the namespace labelled with the run id, and nothing else', async () => {
    const fake = await fakeWithNamespace({ 'zerodrop.dev/run': RUN });
    try {
      await deleteRunNamespace(KubeClient.forServer(fake.url), NS, RUN, { timeoutMs: 1000 });
      const deletes = fake.requests.filter((r) => r.method === 'DELETE');
      expect(deletes.length).toBeGreaterThan(0);
      // Core (pods, services, the namespace) and apps/v1 (the run's Deployments and ReplicaSets), all in the run's namespace.
      for (const d of deletes) expect(d.path).toMatch(new RegExp(`^(/api/v1|/apis/apps/v1)/namespaces/${NS}(/|$)`));
      // The label was read before the first delete.
      const firstDelete = fake.requests.findIndex((r) => r.method === 'DELETE');
      expect(fake.requests.slice(0, firstDelete).some((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`)).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it.each([
    ['another run', { 'zerodrop.dev/run': 'deadbeef' }],
    ['no run label', { team: 'edge' }],
  ])('refuses a namespace of the same name labelled for %s, sending no delete', async (_what, labels) => {
    const fake = await fakeWithNamespace(labels);
    try {
      await expect(deleteRunNamespace(KubeClient.forServer(fake.url), NS, RUN, { timeoutMs: 1000 })).rejects.toThrow(/refusing to delete it/);
      expect(fake.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe('(d) credentials stay out of logs and reports', () => {
  it('pod output and rendered reports have every registered secret replaced by ***', async () => {
    const secret = `pw-${randomUUID()}`;
    registerSecret(secret);
    const recorder = new Recorder();
    recorder.podOutput('gateway-1', 'stdout', `turnserver: user zerodrop password ${secret}`);
    expect(recorder.timeline.podOutput['gateway-1']?.[0]?.line).toBe('turnserver: user zerodrop password ***');

    // A result that carries the secret where the recorder cannot see it (a reason, a pod line).
    const run: RunResult = {
      tool: { name: 'zerodrop', version: 'test' },
      provider: 'local',
      mode: 'default',
      startedAt: new Date(0).toISOString(),
      durationMs: 1,
      scenarios: [
        {
          id: 'gateway-delete-turn',
          profile: 'coturn',
          verdict: 'inconclusive',
          durationMs: 1,
          reason: `deploy failed: 401 for Bearer ${secret}`,
          assertions: [{ name: 'noLostPackets', verdict: 'fail', message: `lost with ${secret}` }],
          counts: { requests: 0, failed: 0 },
          timeline: { ...recorder.timeline, podOutput: { 'gateway-1': [{ t: 0, stream: 'stdout', line: `raw ${secret}` }] } },
        },
      ],
    } as unknown as RunResult;
    // Control: unredacted, the renderers that carry messages and pod output would publish it.
    for (const name of REPORTER_NAMES.filter((n) => n !== 'conformance')) expect(reporters[name].render(run), name).toContain(secret);
    const dir = await mkdtemp(join(scratch, 'report-'));
    await writeReports(run, dir);
    for (const file of REPORT_FILES) {
      const text = await readFile(join(dir, file), 'utf8');
      expect(text, file).not.toContain(secret);
      if (file !== 'conformance.yaml') expect(text, file).toContain('***');
    }
    expect(redact(`a ${secret} b`)).toBe('a *** b');
  });

  it('a kubeconfig token that a misbehaving API server quotes back appears nowhere in the run output', async () => {
    const token = `tok-${randomUUID()}`;
    const received: string[] = [];
    // An API server that echoes the Authorization header into every error: the worst case for a leak.
    const server = http.createServer((req, res) => {
      received.push(req.headers.authorization ?? '');
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', code: 500, message: `denied for ${req.headers.authorization ?? ''}` }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const kubeconfig = join(scratch, 'planted-kubeconfig.yaml');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
        `users: [{name: u, user: {token: ${token}}}]`,
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const dir = await mkdtemp(join(scratch, 'cluster-'));
    try {
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, [MAIN, 'run', '--provider', 'cluster', '--kubeconfig', kubeconfig, '--scenario', 'backend-delete-http', '--report-dir', dir], { timeout: 60_000 }, (error, stdout, stderr) =>
          done({ code: error ? Number((error as { code?: number }).code) : 0, stdout, stderr }),
        );
      });
      // The token was really used and really quoted back, so the run had it in hand.
      expect(received).toContain(`Bearer ${token}`);
      expect(r.stdout + r.stderr).toContain('denied for Bearer ***');
      const texts = [r.stdout, r.stderr, ...(await Promise.all(REPORT_FILES.map((f) => readFile(join(dir, f), 'utf8'))))];
      for (const text of texts) expect(text).not.toContain(token);
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('(e) the TURN secret is in no process argument, environment or file', () => {
  /** Which of `pids` show `secret` in their arguments or environment, as /proc shows them. */
  async function exposing(pids: readonly number[], secret: string): Promise<string[]> {
    const found: string[] = [];
    for (const pid of pids) {
      for (const file of ['cmdline', 'environ'] as const) {
        const text = await readFile(`/proc/${pid}/${file}`, 'utf8').catch(() => '');
        if (text.includes(secret)) found.push(`${pid} ${file}`);
      }
    }
    return found;
  }

  it('the check sees a secret passed as an argument or in the environment (control)', async () => {
    const secret = `pw-${randomUUID()}`;
    const child = spawn('sleep', ['30'], { env: { ...process.env, LEAK: secret } });
    const argChild = spawn('sh', ['-c', 'sleep 30', `x:${secret}`]);
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(await exposing([child.pid ?? 0], secret)).toEqual([`${child.pid} environ`]);
      expect(await exposing([argChild.pid ?? 0], secret)).toEqual([`${argChild.pid} cmdline`]);
    } finally {
      child.kill('SIGKILL');
      argChild.kill('SIGKILL');
    }
  });

  it.skipIf(!hasCommand('turnserver'))('coturn gets its credential from a deleted file: a TURN allocation works, and ps, /proc and TMPDIR show nothing', async () => {
    const { startCoturn } = await import('../test-support/turn.ts');
    const { TurnClient } = await import('../src/load/turn/client.ts');
    const { TURN_PASSWORD, TURN_USER } = await import('../src/profiles/coturn.ts');
    const tmp = await mkdtemp(join(scratch, 'turn-tmp-'));
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = tmp;
    const coturn = await startCoturn('127.0.0.1', 3000 + Math.floor(Math.random() * 2000)).finally(() => {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
    });
    try {
      // The credential reached turnserver: a long-term-credential Allocate succeeds.
      const client = await TurnClient.open({ server: coturn.address, username: TURN_USER, password: TURN_PASSWORD, localAddress: '127.0.0.1', requestTimeoutMs: 1000 });
      try {
        await client.allocate();
      } finally {
        client.destroy();
      }
      expect((await readFile(`/proc/${coturn.child.pid}/comm`, 'utf8')).trim()).toBe('turnserver');
      expect(await exposing([coturn.child.pid ?? 0], TURN_PASSWORD)).toEqual([]);
      expect(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })).not.toContain(TURN_PASSWORD);
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      await coturn.stop();
    }
  });
});
