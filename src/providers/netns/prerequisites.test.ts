import { describe, expect, it } from 'vitest';
import { netnsMissing } from './prerequisites.ts';

describe('netnsMissing', () => {
  it('names each missing piece with what to do', async () => {
    const missing = await netnsMissing({ uid: 1000, kernel: '5.10.0-28-amd64', env: { PATH: '/nonexistent', ZERODROP_NETNS_BLOCK: '127.0.0.0/18', ZERODROP_KUBE_BINARIES: '/nonexistent' } });
    const text = missing.join('\n');
    expect(text).toMatch(/not root: --provider netns creates network namespaces/);
    expect(text).toMatch(/Linux 5\.10\.0-28-amd64 is older than 5\.13, which kube-proxy's nftables mode needs/);
    expect(text).toMatch(/nft not found on PATH \(install: apt-get install nftables\)/);
    expect(text).toMatch(/ZERODROP_NETNS_BLOCK=127\.0\.0\.0\/18: .*refuses loopback/);
    expect(text).toMatch(/the binaries directory \/nonexistent lacks etcd, kube-apiserver/);
  });
});
