import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { packageRoot } from '../../paths.ts';
import { REFERENCE_GRPC } from '../../profiles/reference.ts';
import { appBundle, BUNDLED_APPS, prebuiltBundle } from './app-bundle.ts';

const scratch = mkdtempSync(join(tmpdir(), 'zerodrop-app-bundle-'));
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the gRPC reference app as a cluster gets it', () => {
  let bundle = '';

  it('is one module, cached by its inputs, that imports nothing but node: built-ins', async () => {
    vi.stubEnv('ZERODROP_CACHE_DIR', join(scratch, 'cache'));
    bundle = await appBundle(REFERENCE_GRPC, packageRoot);
    const cached = readdirSync(join(scratch, 'cache', 'app-bundles'));
    expect(cached).toEqual([expect.stringMatching(/^reference-grpc-[0-9a-f]{16}\.mjs$/)]);
    // A cached bundle is taken as it is: a bundle made anew would not carry this line.
    writeFileSync(join(scratch, 'cache', 'app-bundles', cached[0]!), `${bundle}\n// cached`);
    expect(await appBundle(REFERENCE_GRPC, packageRoot)).toBe(`${bundle}\n// cached`);
    const specifiers = [...bundle.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["']([^"']+)["']/g)].map((m) => m[1]!);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual([]);
    // It shares the fixtures ConfigMap (1 MiB of data) with the other files of a run.
    expect(Buffer.byteLength(bundle)).toBeLessThan(600 * 1024);
  });

  it('serves from a directory with no node_modules, drain.proto beside it, as the fixtures mount has them', async () => {
    expect(bundle).not.toBe('');
    const mount = join(scratch, 'fixtures');
    mkdirSync(mount);
    const app = join(mount, basename(REFERENCE_GRPC));
    const [proto] = BUNDLED_APPS[REFERENCE_GRPC]!.reads;
    writeFileSync(app, bundle);
    copyFileSync(join(packageRoot, proto!), join(mount, basename(proto!)));
    const server = spawn(process.execPath, [app], { cwd: mount, env: { PATH: process.env['PATH'] ?? '', PORT: '0', POD_NAME: 'bundled-1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: server.stdout });
      const [first] = (await once(lines, 'line')) as [string];
      const { port } = JSON.parse(first) as { ev: string; port: number };
      const definition = grpc.loadPackageDefinition(protoLoader.loadSync(join(packageRoot, proto!), { defaults: true }));
      const Drain = (definition['zerodrop'] as grpc.GrpcObject)['drain'] as grpc.GrpcObject;
      const Client = (Drain['v1'] as grpc.GrpcObject)['Drain'] as grpc.ServiceClientConstructor;
      const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      try {
        const pod = await new Promise<string>((resolve, reject) => {
          client['Unary']!({ delayMs: 1 }, (err: Error | null, reply: { pod: string }) => (err ? reject(err) : resolve(reply.pod)));
        });
        expect(pod).toBe('bundled-1');
      } finally {
        client.close();
      }
    } finally {
      server.kill('SIGKILL');
    }
  });

  it('is taken from beside the built module in an installed package, never from src/ or the repository dist/', () => {
    expect(prebuiltBundle(REFERENCE_GRPC, 'file:///pkg/dist/providers/kube/app-bundle.js')).toBe('/pkg/dist/providers/kube/bundles/reference-grpc.mjs');
    expect(existsSync(prebuiltBundle(REFERENCE_GRPC))).toBe(false);
  });
});
