// defineProfile: a system under test as data, written by a team in its own zerodrop.config.ts (or a
// module it imports), for a binary and its configuration template. It says what the system is
// (role, protocols), how a pod runs it (command, templates rendered per pod, environment,
// readiness) and how it stops (preStop, stop signal, grace period, the drain it promises). The
// definition is validated when it is made: a wrong field, or a template placeholder that no pod
// provides, is a UsageError naming the field, the value and the fix, before anything starts.
//
// A field that depends on the scenario (a preStop that must outlast the load balancer's
// deprogramming, which a scenario sets) may be a function of the PodContext the scenario gives.

import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { UsageError } from '../cli/usage-error.ts';
import { defaultProbe, type PreStop, type ProbeHandler } from '../model/workload.ts';
import { packageRoot } from '../paths.ts';
import { ProfileCannotPlay, type BackendPlan, type GatewayPlan, type Profile, type ProfileKind, type Requirement } from './profile.ts';

export const PROTOCOLS = ['http', 'h2c', 'tcp-stream', 'udp', 'turn'] as const;
export type ProfileProtocol = (typeof PROTOCOLS)[number];

/** What a scenario tells a profile about the pod it needs; fields given as functions receive it. */
export interface PodContext {
  role: 'gateway' | 'backend';
  protocol: ProfileProtocol;
  /** The container port the system must listen on (also the pod's `PORT`). */
  port: number;
  /** How long the client-facing Service's load balancer keeps sending new connections to a terminating pod. */
  programmingDelayMs: number;
  /** The scenario's terminationGracePeriodSeconds, when it sets one. */
  graceSeconds?: number;
  /** Gateways: the backend Service they forward to (its address is in `BACKEND_SERVICE_HOST`/`_PORT`). */
  backendService?: string;
  backendPort?: number;
}

/** A value, or a function of the scenario's PodContext. */
export type PerPod<T> = T | ((pod: PodContext) => T);

export type ReadinessDefinition = { httpGet: { path: string } } | { tcpSocket: Record<string, never> };

export interface DrainPromise {
  /** The pod exits no earlier than this after the delete (a preStop that waits for deprogramming). */
  minDrainSeconds: number;
  /** ... and no later than this: the system's own bound on its graceful stop, plus the preStop. */
  drainTimeoutSeconds: number;
}

/** Everything a profile can say; the twin (`naive`) takes the same fields, each replacing the profile's. */
export interface ProfileFields {
  /** One line: what running this profile demonstrates. */
  description: string;
  /**
   * argv of the pod's main process (it receives the stop signal, as PID 1 of a container would).
   * `${NAME}` is replaced by the pod's variable NAME (see PLACEHOLDERS), e.g. `${POD_DIR}/httpd.conf`.
   */
  command: string[];
  /**
   * Configuration files rendered for each pod into its own directory (`${POD_DIR}`) before the
   * command starts: file name in the pod directory -> template path (relative to the working
   * directory, or absolute). Every `${NAME}` in a template is replaced the same way.
   */
  config?: Record<string, string>;
  /** Extra variables of the pod, usable as placeholders too. */
  env?: Record<string, string>;
  /** How the pod says it is ready, on its `PORT` (default: a TCP connect). */
  readiness?: ReadinessDefinition;
  /** Runs at the delete, before the stop signal: wait for deprogramming (sleep) or start the drain (exec). */
  preStop?: PerPod<PreStop | undefined>;
  /** The signal that starts the graceful stop (the image's STOPSIGNAL); SIGTERM by default. */
  stopSignal?: NodeJS.Signals;
  /** The pod's grace period; the scenario's when not set. */
  terminationGracePeriodSeconds?: PerPod<number | undefined>;
  /** The drain the system promises; the timing assertions take their bounds from it. */
  drain?: PerPod<DrainPromise | undefined>;
}

export interface ProfileDefinition extends ProfileFields {
  /** The profile's name in `--profile`, reports and test names: lower case, digits and '-'. */
  name: string;
  /** What the system is in the scenarios' topologies. */
  role: 'gateway' | 'backend';
  /** What it carries; a scenario that needs another protocol is skipped with the reason. */
  protocols: ProfileProtocol[];
  /** Programs that must be on PATH, each with the command that installs it (missing: the pair is skipped with it). */
  requires?: Requirement[];
  /** `system` (default: must drain correctly), `reference`, or `mutant` (broken on purpose: must fail). */
  kind?: Exclude<ProfileKind, 'naive'>;
  /**
   * The system as it behaves with its defaults, named `<name>-naive`, declared as the fields that
   * differ. Expected to fail the scenarios that need the drain it lacks.
   */
  naive?: Partial<ProfileFields> & { description: string };
}

/** The variables every pod has, usable as `${NAME}` in commands and templates. */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  POD_NAME: 'the pod name, e.g. gateway-1 (the downward API: metadata.name)',
  POD_IP: "the pod's address (127.x.y.z locally; status.podIP in a cluster)",
  POD_NAMESPACE: "the pod's namespace",
  POD_DIR: "the pod's own scratch directory (an emptyDir in a cluster), where config files are rendered",
  PORT: 'the container port the system must listen on',
  BACKEND_SERVICE_HOST: "gateways: the backend Service's address (Kubernetes service environment variables)",
  BACKEND_SERVICE_PORT: "gateways: the backend Service's port",
  DRAIN_TIMEOUT_SECONDS: "the system's own bound on its graceful stop: the drain's drainTimeoutSeconds minus its minDrainSeconds (5 when no drain is declared)",
  ZERODROP_RUN_ID: 'the run id',
};

const RENDER = fileURLToPath(new URL('fixtures/gateways/render.mjs', `file://${packageRoot}`));
const DEFAULT_STOP_TIMEOUT_SECONDS = 5;
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PLACEHOLDER = /\$\{([A-Z][A-Z0-9_]*)\}/g;

const perPod = <T extends z.ZodType>(schema: T) => z.union([schema, z.function()]);
const fields = {
  description: z.string({ error: 'must be one line saying what the profile demonstrates' }).min(1, 'must not be empty'),
  command: z.array(z.string(), { error: 'must be the argv of the pod, e.g. ["apache2", "-f", "${POD_DIR}/httpd.conf", "-DFOREGROUND"]' }).min(1, 'must name the program to run'),
  config: z.record(z.string().regex(/^[\w.-]+$/, 'file names in the pod directory are [A-Za-z0-9_.-]'), z.string({ error: 'must be the path of a template file' })).optional(),
  env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'variable names are upper case, digits and _'), z.string({ error: 'values are strings' })).optional(),
  readiness: z.union([z.strictObject({ httpGet: z.strictObject({ path: z.string().startsWith('/') }) }), z.strictObject({ tcpSocket: z.strictObject({}) })], { error: 'must be { httpGet: { path: "/healthz" } } or { tcpSocket: {} }' }).optional(),
  preStop: perPod(
    z.union([z.strictObject({ sleep: z.strictObject({ seconds: z.number().min(0) }) }), z.strictObject({ exec: z.strictObject({ command: z.array(z.string()).min(1) }) })], {
      error: 'must be { sleep: { seconds: N } }, { exec: { command: [...] } } or a function of the pod returning one',
    }),
  ).optional(),
  stopSignal: z.string().regex(/^SIG[A-Z0-9]+$/, 'must be a signal name like SIGTERM, SIGQUIT, SIGWINCH').optional(),
  terminationGracePeriodSeconds: perPod(z.number({ error: 'must be a number of seconds' }).min(0)).optional(),
  drain: perPod(z.strictObject({ minDrainSeconds: z.number().min(0), drainTimeoutSeconds: z.number().min(0) }, { error: 'must be { minDrainSeconds, drainTimeoutSeconds }' })).optional(),
};
const schema = z.strictObject({
  name: z.string({ error: 'must be a name' }).regex(NAME, 'must be lower case letters, digits and -, e.g. my-gateway'),
  role: z.enum(['gateway', 'backend'], { error: 'must be "gateway" or "backend"' }),
  protocols: z.array(z.enum(PROTOCOLS, { error: `must be one of ${PROTOCOLS.join(', ')}` })).min(1, 'must name at least one protocol'),
  requires: z.array(z.strictObject({ binary: z.string().min(1), install: z.string().min(1) }), { error: 'must be [{ binary, install }]' }).optional(),
  kind: z.enum(['system', 'reference', 'mutant'], { error: 'must be "system", "reference" or "mutant"' }).optional(),
  naive: z.strictObject({ ...fields, command: fields.command.optional() }).optional(),
  ...fields,
});

/** Marks the profiles made by defineProfile, so that a config's `profiles` can tell them from names. */
const DEFINED = Symbol.for('zerodrop.definedProfile');

/** Marks a profile made from a definition (defineProfile, defineHelmProfile) as selectable by a config. */
export function markDefined<T extends Profile>(profile: T): T {
  return Object.assign(profile, { [DEFINED]: true });
}

export function isDefinedProfile(value: unknown): value is Profile {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINED] === true;
}

function problemsOf(error: z.ZodError, input: unknown, where: string): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
    if (issue.code === 'unrecognized_keys') return `${where}${path ? `${path}: ` : ': '}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; fields: ${Object.keys(schema.shape).join(', ')}`;
    let value: unknown = input;
    for (const key of issue.path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
    return `${where}.${path} = ${typeof value === 'function' ? '(function)' : (JSON.stringify(value) ?? 'undefined')}: ${issue.message}`;
  });
}

/** Placeholders a text uses that no pod of this profile provides. */
function unknownPlaceholders(text: string, env: Record<string, string>): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string).filter((name) => !(name in PLACEHOLDERS) && !(name in env));
}

function templatePath(path: string): string {
  return isAbsolute(path) ? path : resolve(process.cwd(), path);
}

/** Checks the fields' commands and templates: every file exists and every placeholder is provided. */
function checkTemplates(where: string, f: Partial<ProfileFields>): string[] {
  const problems: string[] = [];
  const env = f.env ?? {};
  const known = () => [...Object.keys(PLACEHOLDERS), ...Object.keys(env)].join(', ');
  (f.command ?? []).forEach((arg, i) => {
    const unknown = unknownPlaceholders(arg, env);
    if (unknown.length > 0) problems.push(`${where}.command[${i}] = ${JSON.stringify(arg)}: unknown placeholder ${unknown.map((u) => `\${${u}}`).join(', ')}; placeholders: ${known()}, or add it to env`);
  });
  for (const [file, path] of Object.entries(f.config ?? {})) {
    let text: string;
    try {
      text = readFileSync(templatePath(path), 'utf8');
    } catch (error) {
      problems.push(`${where}.config.${file} = ${JSON.stringify(path)}: cannot read the template (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); paths are relative to ${process.cwd()}`);
      continue;
    }
    const unknown = [...new Set(unknownPlaceholders(text, env))];
    if (unknown.length > 0) problems.push(`${where}.config.${file} (${path}): unknown placeholder ${unknown.map((u) => `\${${u}}`).join(', ')}; placeholders: ${known()}, or add it to env`);
  }
  return problems;
}

/** A defined profile; `naive` is its twin when one was declared (select it as `profiles: [p, p.naive]`). */
export type DefinedProfile = Profile & { readonly naive?: Profile };

/**
 * A system under test, for the local provider: validated now (a UsageError naming every bad field),
 * usable in a config's `profiles` like a built-in name.
 */
export function defineProfile(definition: ProfileDefinition): DefinedProfile {
  const where = `defineProfile(${typeof (definition as { name?: unknown })?.name === 'string' ? (definition as { name: string }).name : '?'})`;
  const parsed = schema.safeParse(definition);
  const problems = parsed.success ? [] : problemsOf(parsed.error, definition, where);
  if (parsed.success) {
    problems.push(...checkTemplates(where, definition));
    if (definition.naive) problems.push(...checkTemplates(`${where}.naive`, { ...definition, ...definition.naive }));
  }
  if (problems.length > 0) throw new UsageError(problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`);
  const profile = toProfile(definition, definition.kind ?? 'system');
  if (!definition.naive) return profile;
  const { naive, ...rest } = definition;
  return Object.assign(profile, { naive: toProfile({ ...rest, ...naive, name: `${definition.name}-naive` }, 'naive') });
}

const resolvePerPod = <T>(value: PerPod<T> | undefined, pod: PodContext): T | undefined =>
  typeof value === 'function' ? (value as (pod: PodContext) => T)(pod) : value;

/** A shell word: `${NAME}` stays a variable the pod's shell expands; everything else is literal. */
function shellWord(arg: string): string {
  return arg
    .split(/(\$\{[A-Z][A-Z0-9_]*\})/)
    .map((part, i) => (i % 2 === 1 ? `"${part}"` : part === '' ? '' : `'${part.replaceAll("'", `'\\''`)}'`))
    .join('') || "''";
}

/**
 * The pod's argv: render the templates into the pod directory (render.mjs), export POD_DIR, then
 * `exec` the system in `cwd` (the directory the profile was defined from, so that its relative
 * paths mean what they meant there), so that it is the pod's main process and gets the stop signal itself.
 */
export function podCommand(command: readonly string[], config: Record<string, string>, cwd: string): string[] {
  const templates = Object.entries(config).map(([file, path]) => shellWord(`${file}=${templatePath(path)}`));
  const render = `POD_DIR=$("$ZERODROP_NODE" ${shellWord(RENDER)} ${templates.join(' ')}) && export POD_DIR`;
  return ['sh', '-c', `${render} && cd ${shellWord(cwd)} && exec ${command.map(shellWord).join(' ')}`];
}

function toProfile(def: ProfileDefinition, kind: ProfileKind): Profile {
  const cwd = process.cwd();
  const plan = (pod: PodContext): GatewayPlan => {
    if (!def.protocols.includes(pod.protocol)) {
      throw new ProfileCannotPlay(`profile ${def.name} carries ${def.protocols.join(', ')}, not ${pod.protocol}`);
    }
    const drain = resolvePerPod(def.drain, pod);
    const preStop = resolvePerPod(def.preStop, pod);
    const grace = resolvePerPod(def.terminationGracePeriodSeconds, pod);
    // The system's own bound on its graceful stop: what the promised drain leaves after the minimum
    // drain (the preStop's wait), whatever the preStop does.
    const stopTimeout = drain ? Math.max(1, drain.drainTimeoutSeconds - drain.minDrainSeconds) : DEFAULT_STOP_TIMEOUT_SECONDS;
    const handler: ProbeHandler = def.readiness && 'httpGet' in def.readiness ? { httpGet: { port: pod.port, path: def.readiness.httpGet.path } } : { tcpSocket: { port: pod.port } };
    return {
      command: podCommand(def.command, def.config ?? {}, cwd),
      env: { ZERODROP_NODE: process.execPath, PORT: String(pod.port), DRAIN_TIMEOUT_SECONDS: String(stopTimeout), ...def.env },
      readinessProbe: defaultProbe(handler),
      ...(preStop ? { preStop } : {}),
      ...(def.stopSignal ? { stopSignal: def.stopSignal } : {}),
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
      ...(drain ? { drain } : {}),
    };
  };
  const profile: Profile = {
    name: def.name,
    kind,
    description: def.description,
    requires: def.requires ?? [],
    ...(def.role === 'gateway'
      ? {
          gateway: (request) =>
            plan({
              role: 'gateway',
              protocol: request.protocol,
              port: request.port,
              programmingDelayMs: request.programmingDelayMs ?? 0,
              ...(request.graceSeconds !== undefined ? { graceSeconds: request.graceSeconds } : {}),
              backendService: request.backendService,
              backendPort: request.backendPort,
            }),
        }
      : {
          backend: (request): BackendPlan => {
            const { command, env, readinessProbe, preStop } = plan({ role: 'backend', protocol: request.protocol ?? 'http', port: request.port, programmingDelayMs: 0 });
            return { command, env, readinessProbe, ...(preStop ? { preStop } : {}) };
          },
        }),
  };
  return markDefined(profile);
}
