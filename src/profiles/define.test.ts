import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../cli/usage-error.ts';
import { validateConfig } from '../cli/config.ts';
import { defineProfile, podCommand, type ProfileDefinition } from './define.ts';

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
    expect(bad).toThrow(/\.protocols\[0\] = "http3": must be one of http, h2c, tcp-stream, udp, turn/);
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
    expect(() => validateConfig({ profiles: [{ name: 'fake' }] }, 'cfg')).toThrow(/unknown profile; allowed: reference.*or a profile made with defineProfile/);
  });
});

describe('podCommand', () => {
  it('renders the templates, then execs the command in the definition directory, expanding only ${NAME}', () => {
    const [sh, c, script] = podCommand(['proxy', '--conf', '${POD_DIR}/p.conf', "it's"], { 'p.conf': '/t/p.conf' }, '/home/me/repo');
    expect([sh, c]).toEqual(['sh', '-c']);
    expect(script).toMatch(/^POD_DIR=\$\("\$ZERODROP_NODE" '.*fixtures\/gateways\/render\.mjs' 'p\.conf=\/t\/p\.conf'\) && export POD_DIR && cd '\/home\/me\/repo' && exec 'proxy' '--conf' "\$\{POD_DIR\}"'\/p\.conf' 'it'\\''s'$/);
  });
});
