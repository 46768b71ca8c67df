import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../config/usage-error.ts';
import { validateConfig } from '../config/config.ts';
import { packageRoot } from '../paths.ts';
import { ablationsOf, DROP_LINES_ENV } from './ablation.ts';
import { defineProfile, isDefinedProfile, podCommand, type ProfileDefinition } from './define.ts';
import { profiles } from './index.ts';
import { meshProfiles } from './meshes.ts';
import { ProfileCannotCarry } from './profile.ts';
import { findScenario } from '../scenarios/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'zerodrop-define-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const template = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const gateway = (over: Partial<ProfileDefinition> = {}): ProfileDefinition => ({
  name: 'my-proxy',
  role: 'gateway',
  protocols: ['http'],
  description: 'a proxy',
  command: ['my-proxy', '--config', '${POD_DIR}/proxy.conf'],
  config: { 'proxy.conf': template('proxy.conf', 'listen ${POD_IP}:${PORT}; upstream ${BACKEND_SERVICE_HOST}:${BACKEND_SERVICE_PORT};') },
  ...over,
});

const request = { protocol: 'http' as const, port: 8080, backendService: 'backend', backendPort: 8080, programmingDelayMs: 2000, graceSeconds: 30 };

describe('defineProfile', () => {
  it("carries a reload: its templates rendered again into the pod's directory first, a command run like the pod's own", () => {
    const bySignal = defineProfile(gateway({ reload: { signal: 'SIGHUP' } })).gateway!(request).reload;
    expect(bySignal).toMatchObject({ signal: 'SIGHUP', render: ['sh', '-c', expect.stringMatching(/render\.mjs' 'proxy\.conf=.*proxy\.conf' >\/dev\/null$/)] });
    const byCommand = defineProfile(gateway({ reload: { exec: { command: ['my-proxy', 'reload', '--config', '${POD_DIR}/proxy.conf'] } } })).gateway!(request).reload;
    expect(byCommand && 'exec' in byCommand ? byCommand.exec.command : []).toEqual(['sh', '-c', expect.stringMatching(/exec 'my-proxy' 'reload' '--config' "\$\{POD_DIR\}"'\/proxy\.conf'$/)]);
    expect(defineProfile(gateway()).gateway!(request).reload).toBeUndefined();
    expect(() => defineProfile(gateway({ reload: { signal: 'HUP' } as never }))).toThrow(/reload.*must be a signal name like SIGHUP/);
  });

  it('makes a gateway profile whose plan follows the pod: stop signal, preStop and drain from the scenario', () => {
    const p = defineProfile(
      gateway({
        stopSignal: 'SIGQUIT',
        preStop: ({ programmingDelayMs }) => ({ sleep: { seconds: Math.ceil(programmingDelayMs / 1000) + 1 } }),
        drain: ({ programmingDelayMs }) => ({ minDrainSeconds: programmingDelayMs / 1000 + 1, drainTimeoutSeconds: programmingDelayMs / 1000 + 9 }),
        terminationGracePeriodSeconds: 20,
      }),
    );
    expect(p.kind).toBe('system');
    const plan = p.gateway!(request);
    expect(plan.stopSignal).toBe('SIGQUIT');
    expect(plan.preStop).toEqual({ sleep: { seconds: 3 } });
    expect(plan.drain).toEqual({ minDrainSeconds: 3, drainTimeoutSeconds: 11 });
    expect(plan.terminationGracePeriodSeconds).toBe(20);
    // The system's own stop timeout is what the drain leaves after its minimum.
    expect(plan.env['DRAIN_TIMEOUT_SECONDS']).toBe('8');
    expect(p.gateway!({ ...request, programmingDelayMs: 5000 }).env['DRAIN_TIMEOUT_SECONDS']).toBe('8');
    expect(plan.readinessProbe.handler).toEqual({ tcpSocket: { port: 8080 } });
    expect(p.gateway!({ ...request, programmingDelayMs: 5000 }).preStop).toEqual({ sleep: { seconds: 6 } });
  });

  it('declares how the system ends its drain, and the gateway scenarios judge its drain timing by it', () => {
    const drainTiming = (p: ReturnType<typeof defineProfile>, id: string) => {
      const def = findScenario(id)!;
      return def.build(p, def.defaults).expectations.find((e) => e.assert === 'drainTiming');
    };
    const atTimeout = defineProfile(gateway({ drain: { minDrainSeconds: 2, drainTimeoutSeconds: 9, exits: 'at-timeout' } }));
    for (const id of ['gateway-delete-http', 'gateway-rollout-http', 'gateway-scale-down']) expect(drainTiming(atTimeout, id)).toMatchObject({ exits: 'at-timeout', drainTimeoutMs: 9000 });
    expect(drainTiming(defineProfile(gateway({ drain: { minDrainSeconds: 2, drainTimeoutSeconds: 9 } })), 'gateway-delete-http')).toMatchObject({ exits: 'when-idle' });
    expect(() => defineProfile(gateway({ drain: { minDrainSeconds: 2, drainTimeoutSeconds: 9, exits: 'never' as 'at-timeout' } }))).toThrow(
      /drain\.exits = "never": must be "when-idle" \(it exits once its last connection is gone\) or "at-timeout"/,
    );
  });

  it('skips a scenario whose protocol the profile does not carry, and a role it does not play', () => {
    const p = defineProfile(gateway());
    expect(() => p.gateway!({ ...request, protocol: 'udp' })).toThrow(/carries http, not udp/);
    expect(p.backend).toBeUndefined();
  });

  it('declares the naive twin as the fields that differ', () => {
    const p = defineProfile(gateway({ stopSignal: 'SIGQUIT', preStop: { sleep: { seconds: 3 } }, naive: { description: 'as packaged', stopSignal: 'SIGTERM', preStop: undefined } }));
    expect(p.naive?.name).toBe('my-proxy-naive');
    expect(p.naive?.kind).toBe('naive');
    const plan = p.naive!.gateway!(request);
    expect(plan.stopSignal).toBe('SIGTERM');
    expect(plan.preStop).toBeUndefined();
    expect(p.gateway!(request).preStop).toEqual({ sleep: { seconds: 3 } });
  });

  it('names every bad field with its value and what it must be', () => {
    const bad = () => defineProfile({ ...gateway(), name: 'My Proxy', protocols: ['http3'], stopSignal: 'QUIT', colour: 'red' } as unknown as ProfileDefinition);
    expect(bad).toThrow(UsageError);
    expect(bad).toThrow(/unknown field "colour"/);
    expect(bad).toThrow(/\.name = "My Proxy": must be lower case letters, digits and -/);
    expect(bad).toThrow(/\.protocols\[0\] = "http3": must be one of http, h2c, tcp-stream, websocket, sse, udp, turn/);
    expect(bad).toThrow(/\.stopSignal = "QUIT": must be a signal name like SIGTERM/);
  });

  it('names a template placeholder no pod provides, with the ones that exist', () => {
    const config = { 'proxy.conf': template('typo.conf', 'listen ${POD_IP}:${PROT};') };
    expect(() => defineProfile(gateway({ config }))).toThrow(/config\.proxy\.conf \(.*typo\.conf\): unknown placeholder \$\{PROT\}; placeholders: POD_NAME, POD_IP, .*PORT/);
    // A variable of the profile's own env is a placeholder too.
    expect(() => defineProfile(gateway({ config, env: { PROT: 'x' } }))).not.toThrow();
    expect(() => defineProfile(gateway({ command: ['proxy', '${CONF}'] }))).toThrow(/command\[1\] = "\$\{CONF\}": unknown placeholder \$\{CONF\}/);
    expect(() => defineProfile(gateway({ config: { 'proxy.conf': join(dir, 'missing.conf') } }))).toThrow(/cannot read the template \(ENOENT\)/);
  });

  it('goes into a config by object; a built-in name or a name twice is refused', () => {
    const p = defineProfile(gateway());
    expect(validateConfig({ profiles: [p, 'reference'] }, 'cfg').profiles).toEqual([p, 'reference']);
    const nginx = defineProfile(gateway({ name: 'nginx' }));
    expect(() => validateConfig({ profiles: [nginx] }, 'cfg')).toThrow(/profiles\[0\] = defineProfile\(nginx\): defineProfile name "nginx" is a built-in profile's/);
    expect(() => validateConfig({ profiles: [p, p] }, 'cfg')).toThrow(/profile "my-proxy" is listed twice/);
    // A built-in is itself a defined profile: selecting its own object is selecting it by name.
    const builtIn = profiles.find((b) => b.name === 'nginx')!;
    expect(validateConfig({ profiles: [builtIn] }, 'cfg').profiles).toEqual([builtIn]);
    expect(() => validateConfig({ profiles: [{ name: 'fake' }] }, 'cfg')).toThrow(/unknown profile; allowed: reference.*or a profile made with defineProfile/);
  });
});

describe('defineProfile: the fields the built-ins need', () => {
  it('readiness: an HTTP GET or TCP connect on another port, or a command run in the pod', () => {
    expect(defineProfile(gateway({ readiness: { httpGet: { path: '/ready', port: 9901 } } })).gateway!(request).readinessProbe.handler).toEqual({ httpGet: { path: '/ready', port: 9901 } });
    expect(defineProfile(gateway({ readiness: { tcpSocket: {} } })).gateway!(request).readinessProbe.handler).toEqual({ tcpSocket: { port: 8080 } });
    expect(defineProfile(gateway({ readiness: { exec: { command: ['pg_isready'] } } })).gateway!(request).readinessProbe.handler).toEqual({ exec: { command: ['pg_isready'] } });
    expect(() => defineProfile(gateway({ readiness: { exec: { command: [] } } }))).toThrow(/\.readiness\.exec\.command = \[\]/);
    expect(() => defineProfile(gateway({ readiness: { grpc: {} } as never }))).toThrow(/\.readiness = \{"grpc":\{\}\}: must be \{ httpGet: \{ path: "\/healthz" \} \}, \{ tcpSocket: \{\} \}.*\{ exec: \{ command: \["pg_isready"\] \} \}/);
  });

  it('env may follow the scenario (its peak connections), and check refuses what the system cannot carry', () => {
    const p = defineProfile(
      gateway({
        env: ({ peak = 0 }) => ({ WORKERS: String(2 * peak) }),
        placeholders: ['WORKERS'],
        check: ({ peak = 0 }) => {
          if (peak > 100) throw new ProfileCannotCarry(`${peak} connections are above our 100`);
        },
      }),
    );
    expect(p.gateway!({ ...request, peak: 40 }).env['WORKERS']).toBe('80');
    expect(() => p.gateway!({ ...request, peak: 101 })).toThrow(ProfileCannotCarry);
    expect(() => defineProfile(gateway({ check: 'no' as never }))).toThrow(/\.check = "no": must be a function of the pod that throws ProfileCannotCarry/);
    // A template may use a variable of a function env only once it is declared.
    const config = { 'proxy.conf': template('workers.conf', 'workers ${WORKERS};') };
    expect(() => defineProfile(gateway({ config, env: () => ({ WORKERS: '1' }) }))).toThrow(/unknown placeholder \$\{WORKERS\}/);
    expect(() => defineProfile(gateway({ config, env: () => ({ WORKERS: '1' }), placeholders: ['WORKERS'] }))).not.toThrow();
  });

  it('plays both roles with protocols per role; a role without protocols is named', () => {
    const p = defineProfile(gateway({ role: ['gateway', 'backend'], protocols: { gateway: ['udp'], backend: ['http'] }, command: ({ role }) => ['app', role] }));
    expect(p.gateway!({ ...request, protocol: 'udp' }).command).toEqual(['sh', '-c', expect.stringMatching(/exec 'app' 'gateway'$/) as unknown as string]);
    expect(p.backend!({ port: 8080 }).command.at(-1)).toMatch(/exec 'app' 'backend'$/);
    expect(() => p.gateway!(request)).toThrow(/carries udp as a gateway, not http/);
    expect(() => defineProfile(gateway({ role: ['gateway', 'backend'], protocols: { gateway: ['http'] } }))).toThrow(/\.protocols = \{"gateway":\["http"\]\}: says nothing for the role "backend"/);
    expect(() => defineProfile(gateway({ protocols: { backend: ['http'] } }))).toThrow(/says nothing for the role "gateway"/);
  });

  it('attribution and image are validated, and reach the plan', () => {
    const p = defineProfile(gateway({ attribution: { header: 'x-served-by' }, image: 'httpd:2.4-alpine' }));
    expect(p.gateway!(request)).toMatchObject({ attribution: { header: 'x-served-by' }, image: 'httpd:2.4-alpine' });
    expect(defineProfile(gateway()).gateway!(request).attribution).toEqual({ header: 'x-zerodrop-gateway' });
    expect(defineProfile(gateway({ attribution: 'connection' })).gateway!(request).attribution).toBe('connection');
    expect(() => defineProfile(gateway({ attribution: { header: 'X Served' } }))).toThrow(/\.attribution\.header = "X Served": must be a lower-case header name/);
    expect(() => defineProfile(gateway({ attribution: 'header' as never }))).toThrow(/\.attribution = "header": must be \{ header: "x-served-by" \}.* or "connection"/);
    expect(() => defineProfile(gateway({ image: 'Not An Image' }))).toThrow(/\.image = "Not An Image": must be an image reference, e.g. "httpd:2.4-alpine"/);
    expect(() => defineProfile(gateway({ directory: join(dir, 'nowhere') }))).toThrow(/\.directory = ".*nowhere": no directory at/);
    expect(() => defineProfile(gateway({ placeholders: ['workers'] }))).toThrow(/\.placeholders\[0\] = "workers": variable names are upper case, digits and _/);
    expect(() => defineProfile(gateway({ role: 'proxy' as never }))).toThrow(/\.role = "proxy": must be "gateway", "backend" or both/);
    expect(() => defineProfile(gateway({ env: 'A=1' as never }))).toThrow(/\.env = "A=1": must be \{ NAME: "value" \} or a function of the pod/);
  });
});

describe('defineProfile: drainSettings', () => {
  const conf = () => ({ 'proxy.conf': template('drain.conf', 'listen ${POD_IP}:${PORT};\ndrain_timeout ${DRAIN_TIMEOUT_SECONDS}s;\n') });
  const drainCorrect = (over: Partial<ProfileDefinition> = {}) =>
    gateway({
      config: conf(),
      env: { IDLE: '1' },
      preStop: { sleep: { seconds: 3 } },
      stopSignal: 'SIGQUIT',
      drain: { minDrainSeconds: 3, drainTimeoutSeconds: 9 },
      terminationGracePeriodSeconds: 12,
      ...over,
    });
  const setting = { why: 'because', change: 'taken out', caughtBy: ['gateway-delete-http'] };

  it('derive the ablated profiles <name>-without-<setting>, each weakened as its data says', () => {
    const p = defineProfile(
      drainCorrect({
        drainSettings: [
          { name: 'prestop', ...setting, remove: 'preStop' },
          { name: 'stopsignal', ...setting, remove: 'stopSignal' },
          { name: 'grace', ...setting, grace: 'preStop+1' },
          { name: 'drain_timeout', ...setting, dropLines: ['drain_timeout ${DRAIN_TIMEOUT_SECONDS}s;'] },
          { name: 'idle', ...setting, caughtBy: [], unsetEnv: ['IDLE'] },
        ],
      }),
    );
    const ablated = Object.fromEntries(ablationsOf([p]).map((a) => [a.name, a]));
    expect(Object.keys(ablated)).toEqual(['my-proxy-without-prestop', 'my-proxy-without-stopsignal', 'my-proxy-without-grace', 'my-proxy-without-drain_timeout', 'my-proxy-without-idle']);
    const plan = (name: string) => ablated[name]!.gateway!(request);
    expect(plan('my-proxy-without-prestop').preStop).toBeUndefined();
    expect(plan('my-proxy-without-prestop').stopSignal).toBe('SIGQUIT');
    expect(plan('my-proxy-without-stopsignal').stopSignal).toBeUndefined();
    expect(plan('my-proxy-without-grace').terminationGracePeriodSeconds).toBe(4);
    expect(plan('my-proxy-without-drain_timeout').env[DROP_LINES_ENV]).toBe('drain_timeout ${DRAIN_TIMEOUT_SECONDS}s;');
    expect(plan('my-proxy-without-idle').env['IDLE']).toBeUndefined();
    expect(ablated['my-proxy-without-idle']!.ablation).toEqual({ profile: 'my-proxy', setting: 'idle', caughtBy: [] });
    // The twin carries no drain settings of its own.
    expect(defineProfile(drainCorrect({ drainSettings: [{ name: 'prestop', ...setting, remove: 'preStop' }], naive: { description: 'as packaged', preStop: undefined } })).naive!.drainSettings).toBeUndefined();
  });

  it('names a setting that weakens nothing the profile has, or not in exactly one way', () => {
    expect(() => defineProfile(drainCorrect({ drainSettings: [{ name: 'x', ...setting, dropLines: ['keepalive 5s;'] }] }))).toThrow(
      /drainSettings\[0\]\.dropLines: "keepalive 5s;" matches no line of the config templates \(.*drain\.conf\)/,
    );
    expect(() => defineProfile(gateway({ drainSettings: [{ name: 'x', ...setting, remove: 'preStop' }] }))).toThrow(/drainSettings\[0\]\.remove = "preStop": the profile has no preStop to remove/);
    expect(() => defineProfile(drainCorrect({ drainSettings: [{ name: 'x', ...setting, remove: 'preStop', grace: 'preStop+1' }] }))).toThrow(
      /drainSettings\[0\] = .*: must weaken the setting in exactly one way: dropLines, remove, grace, unsetEnv or margin/,
    );
    expect(() => defineProfile(drainCorrect({ drainSettings: [{ name: 'x', ...setting, unsetEnv: ['NOPE'] }] }))).toThrow(/unsetEnv: NOPE is not in the profile's env \(IDLE\)/);
    expect(() => defineProfile(drainCorrect({ drainSettings: [{ name: 'x', ...setting, remove: 'preStop' }, { name: 'x', ...setting, remove: 'stopSignal' }] }))).toThrow(/drainSettings\[1\]\.name = "x": listed twice/);
    expect(() => defineProfile(drainCorrect({ role: 'backend', drainSettings: [{ name: 'x', ...setting, remove: 'preStop' }] }))).toThrow(/drainSettings: ablations are derived for gateways only/);
  });
});

describe('the built-in profiles', () => {
  it('are definitions of the public kinds (defineProfile, defineHelmProfile), all but the meshes', () => {
    // A built-in added by a private path shows up here; the meshes are a kind of their own (meshes.ts).
    const defined = new Map(profiles.map((p) => [p.name, isDefinedProfile(p)]));
    expect([...defined].filter(([, d]) => !d).map(([name]) => name)).toEqual(meshProfiles.map((p) => p.name));
    expect([...defined].filter(([, d]) => d).map(([name]) => name)).toEqual(expect.arrayContaining(['reference', 'nginx', 'coturn', 'envoy-gateway', 'stunner-naive', 'ingress-nginx']));
  });
});

describe('podCommand', () => {
  it('runs a command defined in the package with nothing to render or expand as it is (a reference app)', () => {
    expect(podCommand(['node', 'fixtures/reference-backend.mjs'], {}, packageRoot)).toEqual(['node', 'fixtures/reference-backend.mjs']);
    // In the package, templates and render.mjs are named relative to it (the pod starts there).
    expect(podCommand(['nginx', '-c', '${POD_DIR}/nginx.conf'], { 'nginx.conf': 'fixtures/gateways/nginx/nginx.conf' }, packageRoot)[2]).toBe(
      `POD_DIR=$("$ZERODROP_NODE" 'fixtures/gateways/render.mjs' 'nginx.conf=fixtures/gateways/nginx/nginx.conf') && export POD_DIR && exec 'nginx' '-c' "\${POD_DIR}"'/nginx.conf'`,
    );
  });

  it('renders the templates, then execs the command in the definition directory, expanding only ${NAME}', () => {
    const [sh, c, script] = podCommand(['proxy', '--conf', '${POD_DIR}/p.conf', "it's"], { 'p.conf': '/t/p.conf' }, '/home/me/repo');
    expect([sh, c]).toEqual(['sh', '-c']);
    expect(script).toMatch(/^POD_DIR=\$\("\$ZERODROP_NODE" '\/.*fixtures\/gateways\/render\.mjs' 'p\.conf=\/t\/p\.conf'\) && export POD_DIR && cd '\/home\/me\/repo' && exec 'proxy' '--conf' "\$\{POD_DIR\}"'\/p\.conf' 'it'\\''s'$/);
  });
});
