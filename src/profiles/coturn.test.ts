import { afterEach, describe, expect, it } from 'vitest';
import { coturnArgs, coturnProfiles, TURN_PASSWORD, TURN_USER } from './coturn.ts';
import { ProfileCannotPlay, type GatewayRequest } from './profile.ts';
import { missingRequirement } from './requirements.ts';

const [coturn, naive] = coturnProfiles;
const REQUEST: GatewayRequest = { protocol: 'turn', port: 3478, backendService: 'backend', backendPort: 9001, graceSeconds: 6 };
const savedPath = process.env['PATH'];

afterEach(() => {
  process.env['PATH'] = savedPath;
});

describe('coturn profiles', () => {
  it('run turnserver unprivileged on the pod IP with long-term credentials, the secret in no argument', () => {
    const args = coturnArgs({ ip: '127.1.2.3', port: 3478, minPort: 49152, maxPort: 49160 });
    expect(args).toEqual(
      expect.arrayContaining([
        '-c',
        '/dev/fd/3',
        '--listening-ip=127.1.2.3',
        '--relay-ip=127.1.2.3',
        '--lt-cred-mech',
        '--allow-loopback-peers',
        '--no-cli',
        '--no-tls',
        '--no-dtls',
        '--pidfile=/dev/null',
        '--userdb=:memory:',
      ]),
    );
    const plan = coturn!.gateway!(REQUEST);
    expect(plan.command.slice(0, 2)).toEqual(['sh', '-c']);
    expect(plan.command[2]).toMatch(/\nexec turnserver .*"--listening-ip=\$POD_IP"/);
    // The credential reaches the shell in the environment and turnserver in a deleted file, never as an argument.
    expect(args.some((a) => a.startsWith('--user='))).toBe(false);
    expect(plan.command.join(' ')).not.toContain(TURN_PASSWORD);
    expect(plan.env).toMatchObject({ ZERODROP_TURN_CREDENTIAL: `${TURN_USER}:${TURN_PASSWORD}` });
  });

  it('differ only in the preStop that holds SIGTERM back until 1 s before the grace period ends', () => {
    expect(coturn!.gateway!(REQUEST).preStop).toEqual({ sleep: { seconds: 5 } });
    expect(naive!.gateway!(REQUEST).preStop).toBeUndefined();
    expect(naive!.gateway!(REQUEST).command).toEqual(coturn!.gateway!(REQUEST).command);
  });

  it('carry TURN only', () => {
    expect(() => coturn!.gateway!({ ...REQUEST, protocol: 'http' })).toThrow(ProfileCannotPlay);
  });

  it('are skipped with the install hint when turnserver is missing', () => {
    process.env['PATH'] = '/nonexistent';
    expect(missingRequirement(coturn!)).toBe('turnserver not found on PATH (install: apt-get install coturn)');
  });
});
