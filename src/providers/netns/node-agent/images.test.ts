import { describe, expect, it } from 'vitest';

import { containerArgv, goProgramBinds, IMAGE_MAP, imagePath, repositoryOf, resolveImage, stopSignalOf } from './images.ts';

describe('image map', () => {
  it('names repositories as a registry does', () => {
    expect(repositoryOf('node:24-alpine')).toBe('node');
    expect(repositoryOf('docker.io/library/nginx:1.29-alpine')).toBe('nginx');
    expect(repositoryOf('coturn/coturn:4.6')).toBe('coturn/coturn');
    expect(repositoryOf('localhost:5000/haproxy@sha256:abc')).toBe('haproxy');
  });

  it('an unknown image or a missing program is ErrImagePull naming the map', () => {
    const unknown = resolveImage('envoyproxy/envoy:v1', '/node', () => true);
    expect(unknown.ok).toBe(false);
    expect(!unknown.ok && unknown.message).toMatch(/image map.*no entry for repository "envoyproxy\/envoy"/);
    const missing = resolveImage('nginx:1.29-alpine', '/node', () => false);
    expect(!missing.ok && missing.message).toMatch(/runs \/usr\/sbin\/nginx for it, which is not on this host/);
    expect(resolveImage('node:24', '/x/node', (p) => p === '/x/node').ok).toBe(true);
  });

  it('STUNner images run the programs built from Go modules, bound where the images keep them', () => {
    const built = { stunnerd: '/cache/stunner/v0.18.0-x/stunnerd', 'stunner-gateway-operator': '/cache/stunner/v0.18.0-x/stunner-gateway-operator' };
    const unbuilt = resolveImage('docker.io/l7mp/stunnerd:1.1.0', '/node', () => true);
    expect(!unbuilt.ok && unbuilt.message).toMatch(/runs stunnerd for it, built from a Go module, and this cluster has no build of it/);
    const stunnerd = resolveImage('docker.io/l7mp/stunnerd:1.1.0', '/node', () => true, built);
    expect(stunnerd.ok && goProgramBinds(stunnerd.spec, built)).toEqual([{ source: built.stunnerd, target: '/.zerodrop/bin/stunnerd' }]);
    expect(stunnerd.ok && imagePath(stunnerd.spec)).toMatch(/^\/\.zerodrop\/bin:/);
    expect(stunnerd.ok && containerArgv(stunnerd.spec, undefined, undefined)).toEqual(['stunnerd', '-c', '/stunnerd.conf']);
    const operator = resolveImage('l7mp/stunner-gateway-operator:0.18.0', '/node', () => true, built);
    expect(operator.ok && goProgramBinds(operator.spec, built)).toEqual([{ source: built['stunner-gateway-operator'], target: '/manager' }]);
    expect(operator.ok && containerArgv(operator.spec, undefined, ['--leader-elect'])).toEqual(['/manager', '--leader-elect']);
  });

  it("Traefik's image runs its build with the chart's flag-only args, and says how to build it when absent", () => {
    const unbuilt = resolveImage('docker.io/traefik:v3.6.12', '/node', () => true);
    expect(!unbuilt.ok && unbuilt.message).toMatch(/runs traefik for it, .*no build of it \(npm run traefik:build,/);
    const built = { traefik: '/cache/traefik/v3.6.12-x/traefik' };
    const traefik = resolveImage('traefik:v3.6.12', '/node', () => true, built);
    expect(traefik.ok && goProgramBinds(traefik.spec, built)).toEqual([{ source: built.traefik, target: '/.zerodrop/bin/traefik' }]);
    expect(traefik.ok && containerArgv(traefik.spec, undefined, ['--ping'])).toEqual(['traefik', '--ping']);
    expect(traefik.ok && traefik.spec.stopSignal).toBe('SIGTERM');
  });

  it('command/args override entrypoint/cmd as in Kubernetes', () => {
    const nginx = IMAGE_MAP.find((s) => s.repositories.includes('nginx'))!;
    expect(containerArgv(nginx, undefined, undefined)).toEqual(['nginx', '-g', 'daemon off;']);
    expect(containerArgv(nginx, ['sh', '-c'], ['exec nginx'])).toEqual(['sh', '-c', 'exec nginx']);
    const coturn = IMAGE_MAP.find((s) => s.repositories.includes('coturn/coturn'))!;
    expect(containerArgv(coturn, undefined, ['-n'])).toEqual(['turnserver', '-n']);
  });

  it('stop signals: the image STOPSIGNAL unless lifecycle.stopSignal', () => {
    const by = (r: string) => IMAGE_MAP.find((s) => s.repositories.includes(r));
    expect(stopSignalOf(by('nginx'), undefined)).toBe('SIGQUIT');
    expect(stopSignalOf(by('haproxy'), undefined)).toBe('SIGUSR1');
    expect(stopSignalOf(by('node'), undefined)).toBe('SIGTERM');
    expect(stopSignalOf(by('nginx'), 'SIGTERM')).toBe('SIGTERM');
  });
});
