// coturn (https://github.com/coturn/coturn), the TURN server, as the gateway of the TURN scenarios.
//
// It runs unprivileged as a pod on its pod IP: listening and relaying on that address only, long-term
// credentials with one static user, relay ports across the whole dynamic range of its own IP, loopback peers allowed (the
// backends are 127.x pods), no TLS/DTLS, no CLI. Options are those of turnserver(1) 4.6
// (docs/Configuration.md and examples/etc/turnserver.conf in the coturn repository). Everything is
// on the command line except the credential, the pid file is /dev/null and the user database is
// SQLite's in-memory one. The credential is not an argument, because every local user can read a
// process's arguments (`ps`); the pod's shell writes it to a private temporary file, opens that as
// descriptor 3, deletes it and execs `turnserver -c /dev/fd/3` (a regular file, since turnserver
// reads its configuration file twice; a pipe would be empty the second time), so the secret is
// neither in `ps`, nor in turnserver's environment, nor left on disk.
//
// Defined with the public defineProfile, as a team would define it (docs/own-gateway.md).
//
// What coturn does on SIGTERM (measured with 4.6.1, and the reason for the two profiles): it has no
// drain. The process is terminated by the signal itself 2-5 ms after it arrives, logging nothing;
// every allocation and relay port dies with it, with no message to the clients (they find out when
// their next Refresh times out). No
// option changes that in 4.6 (`--help` has no drain or graceful shutdown setting). So:
// - `coturn`: the drain-correct deployment of it: a preStop hook that sleeps for the allocations to
//   end (`terminationGracePeriodSeconds` long enough), so that SIGTERM only arrives after the
//   load balancer stopped sending new allocations and the clients' allocations ran their course;
// - `coturn-naive`: coturn as packaged, no preStop: SIGTERM at the delete cuts every live allocation.

import { registerSecret } from '../observe/redact.ts';
import { packageRoot } from '../paths.ts';
import { defineProfile } from './define.ts';
import { ProfileCannotCarry, type Profile } from './profile.ts';

export const TURN_USER = 'zerodrop';
/** ZERODROP_TURN_PASSWORD sets the credential (a team's own secret need not live in code); never logged. */
export const TURN_PASSWORD = process.env['ZERODROP_TURN_PASSWORD'] || 'zerodrop-turn-secret';
registerSecret(TURN_PASSWORD);
export const TURN_REALM = 'zerodrop.local';
/** Carries `user:password` to the pod's shell, which hands it to turnserver in a file (see the top). */
export const TURN_CREDENTIAL_ENV = 'ZERODROP_TURN_CREDENTIAL';

export interface CoturnOptions {
  /** Address to listen and relay on; `$POD_IP` is expanded by the pod's shell. */
  ip: string;
  port: number;
  minPort: number;
  maxPort: number;
  realm?: string;
  /** Allocation lifetime cap; coturn's default is 3600 s. */
  maxAllocateLifetimeSeconds?: number;
  verbose?: boolean;
}

/** turnserver's argv (without the binary); the credential comes in the file on descriptor 3 (coturnScript). */
export function coturnArgs(o: CoturnOptions): string[] {
  const args = [
    '-c',
    '/dev/fd/3',
    `--listening-ip=${o.ip}`,
    `--relay-ip=${o.ip}`,
    `--listening-port=${o.port}`,
    `--min-port=${o.minPort}`,
    `--max-port=${o.maxPort}`,
    '--lt-cred-mech',
    `--realm=${o.realm ?? TURN_REALM}`,
    '--no-tls',
    '--no-dtls',
    '--no-cli',
    '--allow-loopback-peers',
    '--no-multicast-peers',
    '--no-software-attribute',
    '--fingerprint',
    '--log-file=stdout',
    '--simple-log',
    '--pidfile=/dev/null',
    '--userdb=:memory:',
  ];
  if (o.maxAllocateLifetimeSeconds !== undefined) args.push(`--max-allocate-lifetime=${o.maxAllocateLifetimeSeconds}`);
  if (o.verbose) args.push('--verbose');
  return args;
}

/**
 * The `sh -c` script that starts turnserver with `args`, its credential read from $ZERODROP_TURN_CREDENTIAL
 * (`user:password`). `$POD_IP` in an argument is expanded by the shell; everything else is quoted.
 */
export function coturnScript(args: readonly string[]): string {
  const quoted = args.map((a) => (a.includes('$POD_IP') ? `"${a}"` : `'${a}'`));
  return [
    'set -e',
    'umask 077',
    'conf=$(mktemp "${TMPDIR:-/tmp}/zerodrop-turn-XXXXXX")',
    // printf is a shell builtin: the credential never becomes a process argument.
    `printf 'user=%s\\n' "$${TURN_CREDENTIAL_ENV}" > "$conf"`,
    'exec 3<"$conf"',
    'rm -f "$conf"',
    `unset ${TURN_CREDENTIAL_ENV}`,
    // exec: the shell becomes turnserver, so SIGTERM reaches it.
    `exec turnserver ${quoted.join(' ')}`,
  ].join('\n');
}

/** The environment coturnScript reads the credential from. */
export function coturnCredentialEnv(user = TURN_USER, password = TURN_PASSWORD): Record<string, string> {
  return { [TURN_CREDENTIAL_ENV]: `${user}:${password}` };
}

/** How long before the end of the grace period the drain-correct preStop lets SIGTERM through. */
const PRESTOP_MARGIN_SECONDS = 1;

/**
 * Relay ports of a pod: the whole dynamic range (RFC 6335), on the pod's own IP, so no pod or other
 * program competes for them. coturn takes one port per allocation; a range sized below the
 * scenario's allocations made new ones fail with `508 Cannot create socket` (docs/drain-settings.md), a limit
 * of ours read as a drain failure.
 */
export const RELAY_PORTS = { minPort: 49_152, maxPort: 65_535 } as const;
const RELAY_PORT_COUNT = RELAY_PORTS.maxPort - RELAY_PORTS.minPort + 1;

export const coturn = defineProfile({
  name: 'coturn',
  role: 'gateway',
  protocols: ['turn'],
  description:
    'coturn 4.6 with a preStop sleep before SIGTERM (it has no drain of its own): live allocations keep relaying until they end or the grace period runs out.',
  directory: packageRoot,
  requires: [{ binary: 'turnserver', install: 'apt-get install coturn' }],
  command: (pod) => ['sh', '-c', coturnScript(coturnArgs({ ip: '$POD_IP', port: pod.port, ...RELAY_PORTS }))],
  env: coturnCredentialEnv(),
  check: (pod) => {
    if ((pod.peak ?? 0) > RELAY_PORT_COUNT) {
      throw new ProfileCannotCarry(`${pod.peak} allocations may meet on one coturn pod, which has ${RELAY_PORT_COUNT} relay ports (${RELAY_PORTS.minPort}-${RELAY_PORTS.maxPort}); use fewer flows and newFlows`);
    }
  },
  // coturn also listens on TCP on the same port: a TCP connect is its readiness.
  readiness: { tcpSocket: {} },
  // SIGTERM ends coturn at once, so the drain is the preStop: hold SIGTERM back until one second
  // before the grace period runs out, letting live allocations run their course while the Service
  // stops sending it new ones. (A finer hook would poll coturn's session count through its CLI or
  // Prometheus endpoint and return once it reaches zero.)
  preStop: (pod) => ({ sleep: { seconds: Math.max(0, (pod.graceSeconds ?? 30) - PRESTOP_MARGIN_SECONDS) } }),
  // TURN has no response header: allocations are attributed to the pod that holds them.
  attribution: 'connection',
  drainSettings: [
    {
      name: 'prestop',
      why: 'SIGTERM ends coturn and every allocation at once: the preStop sleep lets live allocations run their course while the Service stops sending new ones',
      change: 'no preStop hook',
      caughtBy: ['gateway-delete-turn'],
      remove: 'preStop',
    },
  ],
  naive: {
    description: 'coturn as packaged, no preStop: SIGTERM at the delete ends the process and every live allocation at once.',
    preStop: undefined,
  },
});

export const coturnProfiles: Profile[] = [coturn, coturn.naive!];
