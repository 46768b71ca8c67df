import { describe, expect, it } from 'vitest';
import { KubeClient } from './client.ts';
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
});
