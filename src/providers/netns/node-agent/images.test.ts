import { describe, expect, it } from 'vitest';

import { containerArgv, IMAGE_MAP, repositoryOf, resolveImage, stopSignalOf } from './images.ts';

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
