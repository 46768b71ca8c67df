// How container argv/env map onto local processes, and the address pool.

import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { AddressPool } from './addresses.ts';
import { containerEnv, portEnvName, resolveArgv } from './processes.ts';
import { refuses, tcpWorkload } from '../../../test-support/local-provider.ts';

describe('processes', () => {
  it('runs `node` as this Node.js and resolves relative programs against cwd', () => {
    expect(resolveArgv(['node', 'app.ts', '--x'], '/srv')).toEqual({ file: process.execPath, args: ['app.ts', '--x'] });
    expect(resolveArgv(['./bin/app', 'a'], '/srv')).toEqual({ file: path.resolve('/srv', 'bin/app'), args: ['a'] });
    expect(resolveArgv(['sleep', '1'], '/srv')).toEqual({ file: 'sleep', args: ['1'] });
    expect(() => resolveArgv([], '/srv')).toThrow(/empty/);
  });

  it('gives the container its downward-API variables and ports', () => {
    const workload = tcpWorkload('web', {
      env: { A: '1', POD_NAME: 'overridden' },
      ports: [
        { name: 'http', containerPort: 8080, protocol: 'TCP' },
        { name: 'metrics-2', containerPort: 9090, protocol: 'TCP' },
      ],
    });
    const env = containerEnv(workload, { name: 'web-3', ip: '127.1.2.3' }, 'run-9');
    expect(env).toMatchObject({
      A: '1',
      POD_NAME: 'web-3',
      POD_IP: '127.1.2.3',
      POD_NAMESPACE: 'zerodrop',
      ZERODROP_RUN_ID: 'run-9',
      PORT: '8080',
      PORT_HTTP: '8080',
      PORT_METRICS_2: '9090',
    });
    expect(env.PATH).toBe(process.env.PATH);
    expect(portEnvName('grpc-web')).toBe('PORT_GRPC_WEB');
  });
});

describe('AddressPool', () => {
  it('hands out unique loopback addresses of a claimed block and releases the claim on close', async () => {
    const pool = await AddressPool.create();
    const other = await AddressPool.create();
    try {
      expect(pool.prefix).toMatch(/^127\.(\d+)\.(\d+)$/);
      expect(pool.prefix.startsWith('127.0.')).toBe(false);
      expect(pool.prefix).not.toBe(other.prefix);
      const addresses = Array.from({ length: 10 }, () => pool.allocate());
      expect(addresses[0]).toBe(`${pool.prefix}.1`);
      expect(new Set(addresses).size).toBe(10);
      expect(await refuses(`${pool.prefix}.255`, 47_474)).toBe(false);
    } finally {
      pool.close();
      other.close();
    }
    expect(await refuses(`${pool.prefix}.255`, 47_474)).toBe(true);
    expect(() => pool.allocate()).toThrow(/closed/);
  });
});
