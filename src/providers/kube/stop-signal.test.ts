import { describe, expect, it } from 'vitest';
import { findProfile } from '../../profiles/index.ts';
import { findScenario } from '../../scenarios/index.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { unsupported } from '../support.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { executableOf, statedStopSignal } from './stop-signal.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keepsContainerStopSignal, kindKeepsContainerStopSignal } from './stop-signal-probe.ts';

const nginx = (stopSignal?: NodeJS.Signals) => ({ command: ['sh', '-c', 'd=/x && exec nginx -c "$d/nginx.conf"'], ...(stopSignal ? { stopSignal } : {}) });

describe('statedStopSignal', () => {
  it("states a stop signal only where the image's own STOPSIGNAL is not the one wanted", () => {
    // The official nginx image stops on SIGQUIT, nginx's graceful stop.
    expect(statedStopSignal(nginx('SIGQUIT'))).toBeUndefined();
    expect(statedStopSignal(nginx('SIGTERM'))).toBe('SIGTERM');
    expect(statedStopSignal(nginx())).toBe('SIGTERM');
    expect(statedStopSignal({ command: ['node', 'fixtures/reference-backend.mjs'] })).toBeUndefined();
    expect(statedStopSignal({ command: ['node', 'fixtures/reference-backend.mjs'], stopSignal: 'SIGUSR1' })).toBe('SIGUSR1');
  });
});

describe('a cluster that drops lifecycle.stopSignal', () => {
  const topology = (profileName: string) => {
    const def = findScenario('gateway-delete-http');
    const profile = findProfile(profileName);
    if (!def || !profile) throw new Error('catalog changed');
    return def.build(profile, optionsFor(def, {}, false));
  };
  const without = { name: 'cluster', capabilities: { multiNode: true, udp: true } };
  const withGate = { name: 'cluster', capabilities: { multiNode: true, udp: true, containerStopSignals: true } };

  it("skips a profile whose stop signal differs from its image's, and runs the others", () => {
    // nginx-naive stops on plain SIGTERM; the nginx image would send SIGQUIT, a graceful stop.
    expect(unsupported(topology('nginx-naive'), without)).toMatch(/the gateway workload must stop on SIGTERM, not on its image's own signal.*ContainerStopSignals/);
    expect(unsupported(topology('nginx-naive'), withGate)).toBeUndefined();
    expect(unsupported(topology('nginx'), without)).toBeUndefined();
    expect(unsupported(topology('reference'), without)).toBeUndefined();
  });

  it('is found out by a dry-run create that states one; nothing is created', async () => {
    await using fake = await new FakeApiServer().listen();
    const client = KubeClient.forServer(fake.url);
    let keep = true;
    fake.respond((req) => {
      if (req.method !== 'POST' || req.path !== '/api/v1/namespaces/default/pods') return undefined;
      const pod = req.body as { spec: { containers: { lifecycle?: unknown }[] } };
      // What an API server with the gate off stores: the same pod without the field.
      if (!keep) for (const c of pod.spec.containers) delete c.lifecycle;
      return { status: 201, body: pod };
    });
    expect(await keepsContainerStopSignal(client)).toBe(true);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', query: { dryRun: 'All' }, body: { spec: { containers: [{ lifecycle: { stopSignal: 'SIGUSR1' } }] } } });
    keep = false;
    const said: string[] = [];
    expect(await keepsContainerStopSignal(client, (line) => said.push(line))).toBe(false);
    expect(said.join('\n')).toMatch(/drops lifecycle.stopSignal/);
    // A fresh cluster without `default`'s ServiceAccount yet: asked again, not taken for a no.
    keep = true;
    let missing = 2;
    fake.respond(() => (missing-- > 0 ? { status: 403, body: { kind: 'Status', message: 'pods "p" is forbidden: error looking up service account default/default: serviceaccount "default" not found' } } : undefined), { first: true });
    expect(await keepsContainerStopSignal(client, () => undefined, 10)).toBe(true);
    fake.respond(() => ({ status: 403, body: { kind: 'Status', message: 'pods is forbidden', reason: 'Forbidden' } }), { first: true });
    expect(await keepsContainerStopSignal(client, (line) => said.push(line), 10)).toBe(false);
    expect(said.at(-1)).toMatch(/could not check .*403 pods is forbidden/);
  });
});

describe('a reused kind cluster', () => {
  it('is asked whether it keeps lifecycle.stopSignal; one zerodrop created is not', async () => {
    await using fake = await new FakeApiServer().listen();
    const client = KubeClient.forServer(fake.url);
    fake.respond((req) => {
      if (req.method !== 'POST') return undefined;
      const pod = req.body as { spec: { containers: { lifecycle?: unknown }[] } };
      for (const c of pod.spec.containers) delete c.lifecycle;
      return { status: 201, body: pod };
    });
    expect(await kindKeepsContainerStopSignal({ created: true }, client)).toBe(true);
    expect(fake.requests).toHaveLength(0);
    expect(await kindKeepsContainerStopSignal({ created: false }, client)).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  it("is judged by that answer in the kind suites too, never by a hard-coded gate", () => {
    // The suites' session and their skip list read `clusterStopSignals` from the globalSetup's probe.
    const dir = join(import.meta.dirname, '../../../suites/kube/cluster');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/containerStopSignals:\s*true/);
    }
    const setup = readFileSync(join(dir, 'global-setup.ts'), 'utf8');
    expect(setup).toMatch(/provide\('clusterStopSignals', await kindKeepsContainerStopSignal\(cluster/);
    expect(setup).toMatch(/provide\('clusterStopSignals', await keepsContainerStopSignal\(/);
  });
});

describe('executableOf', () => {
  it('names the program a script becomes, past an exec that only redirects (coturn reads its credential on descriptor 3)', () => {
    const script = 'conf=$(mktemp)\nexec 3<"$conf"\nrm -f "$conf"\nexec turnserver -c /dev/fd/3';
    expect(executableOf({ command: ['sh', '-c', script] }).executable).toBe('turnserver');
    expect(executableOf({ command: ['sh', '-c', 'exec 2>&1\nexec /usr/sbin/nginx -g "daemon off;"'] }).executable).toBe('nginx');
  });
});
