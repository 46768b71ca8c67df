// A profile's resources are sized from the scenario, and options beyond what it or
// the harness can carry are refused (ProfileCannotCarry, exit 2 in the CLI), never judged.

import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../config/args.ts';
import { UsageError } from '../config/usage-error.ts';
import { coturnProfiles } from './coturn.ts';
import { gatewayProfiles } from './gateways.ts';
import { checkHarnessFiles, openFileLimit } from './limits.ts';
import { ProfileCannotCarry, type GatewayRequest } from './profile.ts';

const TURN: GatewayRequest = { protocol: 'turn', port: 3478, backendService: 'backend', backendPort: 9001, graceSeconds: 6 };
const HTTP: GatewayRequest = { protocol: 'http', port: 8000, backendService: 'backend', backendPort: 8080, programmingDelayMs: 200 };

describe('sized from the scenario', () => {
  it('coturn relays on the whole dynamic port range of its own IP, and refuses more allocations than ports', () => {
    const [coturn] = coturnProfiles;
    // The 500 flows x 20/s measured in docs/drain-settings.md (250 allocations plus new ones on one pod) fit: 256 ports did not.
    const script = coturn!.gateway!({ ...TURN, peak: 550 }).command.join(' ');
    expect(script).toContain("'--min-port=49152'");
    expect(script).toContain("'--max-port=65535'");
    expect(() => coturn!.gateway!({ ...TURN, peak: 16_384 })).not.toThrow();
    expect(() => coturn!.gateway!({ ...TURN, peak: 16_385 })).toThrow(ProfileCannotCarry);
    expect(() => coturn!.gateway!({ ...TURN, peak: 16_385 })).toThrow(/16385 allocations may meet on one coturn pod, which has 16384 relay ports \(49152-65535\); use fewer flows and newFlows/);
  });

  it("nginx's worker_connections count both sides of each proxied connection (never below nginx's 1,024)", () => {
    const nginx = gatewayProfiles.find((p) => p.name === 'nginx')!;
    expect(nginx.gateway!({ ...HTTP, peak: 50 }).env['WORKER_CONNECTIONS']).toBe('1024');
    const peak = Math.min(2000, Math.floor((openFileLimit() - 64) / 2));
    expect(nginx.gateway!({ ...HTTP, peak }).env['WORKER_CONNECTIONS']).toBe(String(Math.max(1024, 2 * peak + 64)));
  });

  it('the harness refuses connections that would exhaust its open files, naming the limit and the most it can take', () => {
    expect(() => checkHarnessFiles(1000, 'client connections', 4024)).not.toThrow();
    expect(() => checkHarnessFiles(1001, 'client connections', 4024)).toThrow(
      '1001 client connections need about 4027 open files in the harness, above its limit of 4024 (ulimit -n); raise the limit or use at most 1000',
    );
  });

  it('the CLI refuses such options before anything starts, naming scenario and profile', () => {
    const argv = ['--profile', 'nginx', '--scenario', 'gateway-delete-http', '--set', 'clients=10000', '--set', 'keepAliveConnections=10000'];
    // 20,014 connections: about 61,000 files, above any common soft limit; where the limit is higher, it must run.
    if (20_014 * 3 + 1024 > openFileLimit()) {
      let error: unknown;
      try {
        parseRunArgs(argv);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(
        /^--set clients=10000 --set keepAliveConnections=10000: 20014 client connections .* above its limit of \d+ \(ulimit -n\); raise the limit or use at most \d+ \(scenario gateway-delete-http, profile nginx\)$/,
      );
    } else {
      expect(() => parseRunArgs(argv)).not.toThrow();
    }
    expect(() => parseRunArgs(['--profile', 'nginx', '--scenario', 'gateway-delete-http', '--set', 'clients=100'])).not.toThrow();
    // The backend scenarios' connections too: 10,000 need about 31,000 files.
    if (10_000 * 3 + 1024 > openFileLimit()) {
      expect(() => parseRunArgs(['--scenario', 'backend-delete-http', '--set', 'connections=10000'])).toThrow(/^--set connections=10000: 10000 connections need about 31024 open files in the harness.*\(scenario backend-delete-http, profile reference\)$/);
    }
  });
});
