import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeClient, statusOf, type RawWatchEvent } from './client.ts';
import { makeCertificates } from '../netns/certificates.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';

describe('KubeClient', () => {
  it('sends every request over one pooled connection, not a new one per request', async () => {
    await using fake = await new FakeApiServer().listen();
    fake.respond(() => ({ status: 200, body: { kind: 'Namespace' } }));
    const client = KubeClient.forServer(fake.url);
    for (let i = 0; i < 20; i++) await client.request('GET', '/api/v1/namespaces/zerodrop-x');
    expect(fake.requests).toHaveLength(20);
    // One connection per request before the pool (20 here); a pooled client keeps reusing its own.
    expect(fake.connections).toBeLessThanOrEqual(2);
  });

  // An API server offers HTTP/2 over TLS, as kube-apiserver does; the client answers in HTTP/1.1 only
  // (client.ts buildPool says why), for requests, streams and watches alike.
  it('speaks HTTP/1.1 to a TLS API server that offers HTTP/2, and delivers a watch line by line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-client-test-'));
    try {
      const certs = await makeCertificates(dir, { controlPlane: '127.0.0.1', apiServiceIP: '127.0.0.2', nodes: [] });
      const versions: string[] = [];
      const server = createSecureServer({ allowHTTP1: true, key: await readFile(certs.apiServer.key), cert: await readFile(certs.apiServer.cert) }, (req, res) => {
        versions.push(req.httpVersion);
        res.writeHead(200, { 'content-type': 'application/json' });
        if (!req.url?.includes('watch=true')) return res.end(JSON.stringify({ kind: 'Pod' }));
        // Two events, a blank line, and the second split across writes.
        res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } })}\n\n{"type":"MODI`);
        setTimeout(() => res.end(`FIED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\n`), 20);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as { port: number };
        const client = KubeClient.forServer(`https://127.0.0.1:${port}`);
        expect((await client.request('GET', '/api/v1/namespaces/x/pods/a')).body).toEqual({ kind: 'Pod' });
        const events: RawWatchEvent[] = [];
        const ended = await new Promise<unknown>((resolve) => void client.watch('/api/v1/pods', { timeoutSeconds: 5 }, (e) => events.push(e), resolve));
        expect(ended).toBe(null);
        expect(events.map((e) => [e.type, (e.object.metadata as { resourceVersion: string }).resourceVersion])).toEqual([['ADDED', '1'], ['MODIFIED', '2']]);
        expect(versions).toEqual(['1.1', '1.1']);
      } finally {
        server.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ends a watch the server refuses with its status, and one the caller aborts with no error', async () => {
    const queries: string[] = [];
    const server = createServer((req, res) => {
      queries.push(req.url ?? '');
      if (req.url?.includes('resourceVersion=1&')) {
        res.writeHead(410, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1' }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('\n'); // headers out, then silence: a watch with nothing to say
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = KubeClient.forServer(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
      const refused = await new Promise<unknown>((resolve) => void client.watch('/api/v1/pods', { resourceVersion: '1' }, () => {}, resolve));
      expect(statusOf(refused)).toBe(410);
      let controller: AbortController | undefined;
      const aborted = new Promise<unknown>((resolve) => void client.watch('/api/v1/pods', { resourceVersion: '2' }, () => {}, resolve).then((c) => (controller = c)));
      await new Promise((r) => setTimeout(r, 100));
      controller?.abort();
      expect(await aborted).toBe(null);
      expect(queries).toEqual(['/api/v1/pods?resourceVersion=1&watch=true', '/api/v1/pods?resourceVersion=2&watch=true']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
