import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../paths.ts';
import { catalog } from '../scenarios/index.ts';
import { expectedVerdict } from '../scenarios/expected.ts';
import { ablatedName, ablatedProfile, DROP_LINES_ENV, dropTemplateLines, preStopWithoutMargin, type DrainSetting } from './ablation.ts';
import { ablatedProfiles, findProfile, profiles } from './index.ts';
import type { Profile } from './profile.ts';

const base: Profile = {
  name: 'gw',
  kind: 'system',
  description: 'a gateway',
  requires: [{ binary: 'gw', install: 'apt-get install gw' }],
  gateway: () => ({ command: ['gw'], env: { A: '1' }, readinessProbe: { tcpSocket: { port: 1 } } as never, preStop: { sleep: { seconds: 2 } }, terminationGracePeriodSeconds: 10 }),
};
const request = { protocol: 'http', port: 8000, backendService: 'backend', backendPort: 8080 } as const;

describe('ablations', () => {
  it('derive a profile without one setting, from the definition: name, kind, what it must fail, the weakened plan', () => {
    const setting: DrainSetting = { name: 'line', why: 'why', change: 'removed', caughtBy: ['gateway-delete-http'], weaken: dropTemplateLines('x ${Y};', 'z') };
    const ablated = ablatedProfile(base, setting);
    expect(ablated).toMatchObject({ name: 'gw-without-line', kind: 'ablation', requires: base.requires, ablation: { profile: 'gw', setting: 'line', caughtBy: ['gateway-delete-http'] } });
    const plan = ablated.gateway!(request);
    expect(plan.env).toEqual({ A: '1', [DROP_LINES_ENV]: 'x ${Y};\nz' });
    expect(plan.preStop).toEqual({ sleep: { seconds: 2 } });
    expect(ablatedName('nginx', 'prestop')).toBe('nginx-without-prestop');
  });

  it('are expected to fail the scenarios that catch them, and nothing is expected elsewhere', () => {
    const ablated = ablatedProfile(base, { name: 's', why: '', change: '', caughtBy: ['gateway-delete-http'], weaken: (p) => p });
    expect(expectedVerdict({ id: 'gateway-delete-http', defaults: {} }, ablated)).toBe('fail');
    expect(expectedVerdict({ id: 'gateway-scale-down', defaults: {} }, ablated)).toBeUndefined();
  });

  it("nginx-pooled's pool retirement is one setting of both upstream lines; the client side's keepalive_time stays", () => {
    const plan = findProfile('nginx-pooled-without-upstream-keepalive-retirement')!.gateway!(request);
    const markers = plan.env[DROP_LINES_ENV]!.split('\n');
    const template = readFileSync(join(packageRoot, 'fixtures/gateways/nginx/nginx-pooled.conf'), 'utf8');
    const rendered = template.split('\n').filter((line) => !markers.some((m) => line.includes(m)));
    expect(template.split('\n').length - rendered.length).toBe(2);
    expect(rendered.join('\n')).not.toContain('${UPSTREAM_KEEPALIVE');
    expect(rendered).toContain('    keepalive 64;');
    expect(rendered).toContain('  keepalive_time ${KEEPALIVE_TIME_SECONDS}s;');
  });

  it('every drain-correct profile with a drain of its own settings lists them, each caught by scenarios of the catalog or marked as caught by none', () => {
    const ids = new Set(catalog.map((s) => s.id));
    for (const p of ablatedProfiles) for (const id of p.ablation!.caughtBy) expect(ids, `${p.name}: ${id}`).toContain(id);
    const withSettings = profiles.filter((p) => p.drainSettings !== undefined).map((p) => p.name);
    expect(withSettings).toEqual(['reference', 'nginx', 'nginx-pooled', 'haproxy', 'caddy', 'caddy-built', 'coturn']);
    expect(findProfile('nginx-without-keepalive_time')?.kind).toBe('ablation');
  });

  it('the stop signal, preStop and grace ablations weaken what they name', () => {
    const nginx = findProfile('nginx')!.gateway!({ ...request, programmingDelayMs: 200 });
    expect(nginx.stopSignal).toBe('SIGQUIT');
    expect(findProfile('nginx-without-stopsignal')!.gateway!({ ...request, programmingDelayMs: 200 }).stopSignal).toBeUndefined();
    expect(findProfile('nginx-without-prestop')!.gateway!({ ...request, programmingDelayMs: 200 }).preStop).toBeUndefined();
    const grace = findProfile('nginx-without-grace')!.gateway!({ ...request, programmingDelayMs: 200 });
    expect(grace.terminationGracePeriodSeconds).toBe(nginx.drain!.minDrainSeconds + 1);
    expect(grace.terminationGracePeriodSeconds).toBeLessThan(nginx.drain!.drainTimeoutSeconds);
  });

  it('the zero-margin ablation cuts the preStop to the programming delay, sleep and exec hooks alike, and refuses a hook it cannot cut', () => {
    const slow = { ...request, programmingDelayMs: 5000, programmingSpreadMs: 1000 };
    for (const name of ['reference', 'nginx', 'haproxy', 'caddy']) {
      const correct = findProfile(name)!.gateway!(slow);
      const zero = findProfile(`${name}-without-prestop-margin`)!.gateway!(slow);
      // Drain-correct: past the delay and the spread, with a margin; ablated: the delay exactly.
      expect(correct.drain!.minDrainSeconds * 1000, name).toBeGreaterThan(5000 + 1000);
      expect(zero.drain!.minDrainSeconds, name).toBe(5);
      expect(JSON.stringify(zero.preStop), name).toMatch(/"seconds":5\b|sleep 5"/);
      expect(zero.preStop, name).not.toEqual(correct.preStop);
    }
    const caddy = findProfile('caddy-without-prestop-margin')!.gateway!(slow).preStop;
    expect(caddy).toEqual({ exec: { command: ['sh', '-c', 'touch "$POD_DIR/draining" && sleep 5'] } });
    expect(() => preStopWithoutMargin({ ...base.gateway!(request), preStop: { exec: { command: ['sh', '-c', 'drain-and-wait'] } } }, slow)).toThrow(/does not end in `sleep N`/);
    expect(() => preStopWithoutMargin({ ...base.gateway!(request), preStop: undefined }, slow)).toThrow(/no preStop hook/);
  });
});
