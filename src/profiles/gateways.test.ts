import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../paths.ts';

const nginxFixture = (name: string): string[] =>
  readFileSync(join(packageRoot, 'fixtures/gateways/nginx', name), 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));

describe('nginx-pooled.conf', () => {
  // nginx-pooled claims to drain as nginx does, its pool aside: a drain directive changed in one
  // copy and not the other would make the two profiles differ in more than the pool.
  it('is nginx.conf with the pool and nothing else: the same directives, an empty Connection upstream, the three pool lines', () => {
    const POOL = ['    keepalive 64;', '    keepalive_time ${UPSTREAM_KEEPALIVE_TIME_MS}ms;', '    keepalive_timeout ${UPSTREAM_KEEPALIVE_TIMEOUT_MS}ms;'];
    const pooled = nginxFixture('nginx-pooled.conf');
    for (const line of POOL) expect(pooled).toContain(line);
    const unpooled = pooled.filter((line) => !POOL.includes(line)).map((line) => line.replace("'' '';", "'' close;"));
    expect(unpooled).toEqual(nginxFixture('nginx.conf'));
  });
});
