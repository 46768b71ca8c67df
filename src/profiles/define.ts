// defineProfile: a system under test as data, written by a team in its own zerodrop.config.ts (or a
// module it imports), for a binary and its configuration template. It says what the system is
// (role, protocols), how a pod runs it (command, templates rendered per pod, environment,
// readiness) and how it stops (preStop, stop signal, grace period, the drain it promises). The
// definition is validated when it is made: a wrong field, or a template placeholder that no pod
// provides, is a UsageError naming the field, the value and the fix, before anything starts.
//
// A field that depends on the scenario (a preStop that must outlast the load balancer's
// deprogramming, which a scenario sets) may be a function of the PodContext the scenario gives.
// zerodrop's own profiles are written with it too (gateways.ts, coturn.ts, reference.ts,
// reference-gateway.ts): there is no second, private way to define one.

import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { UsageError } from '../config/usage-error.ts';
import type { DrainEnd } from '../model/scenario.ts';
import { defaultProbe, type PreStop, type ProbeHandler, type Reload } from '../model/workload.ts';
import { packageRoot } from '../paths.ts';
import { compileDrainSetting, DRAIN_SETTING_SCHEMA, type DrainSettingDefinition } from './drain-setting.ts';
import { GATEWAY_HEADER, POD_HEADER, ProfileCannotPlay, type Attribution, type BackendPlan, type GatewayPlan, type Profile, type ProfileKind, type Requirement } from './profile.ts';

export const PROTOCOLS = ['http', 'h2c', 'tcp-stream', 'websocket', 'sse', 'udp', 'turn', 'grpc'] as const;
export type ProfileProtocol = (typeof PROTOCOLS)[number];

/** What a scenario tells a profile about the pod it needs; fields given as functions receive it. */
export interface PodContext {
  role: 'gateway' | 'backend';
  protocol: ProfileProtocol;
  /** The container port the system must listen on (also the pod's `PORT`). */
  port: number;
  /** How long the client-facing Service's load balancer keeps sending new connections to a terminating pod. */
  programmingDelayMs: number;
  /**
   * How much later than `programmingDelayMs` the last node's proxy may deprogram the pod (kube-proxy's
   * sync period): a preStop that waits for deprogramming waits at least delay + spread.
   */
  programmingSpreadMs: number;
  /** The scenario's terminationGracePeriodSeconds, when it sets one. */
  graceSeconds?: number;
  /** Gateways: the backend Service they forward to (its address is in `BACKEND_SERVICE_HOST`/`_PORT`). */
  backendService?: string;
  backendPort?: number;
  /**
   * Gateways: the most client connections (HTTP) or allocations (TURN) the scenario opens at once,
   * all of which one pod may have to hold: size the system's own limits from it (nginx's
   * worker_connections) in `env`, or refuse the scenario in `check`.
   */
  peak?: number;
}

/** A value, or a function of the scenario's PodContext. */
export type PerPod<T> = T | ((pod: PodContext) => T);

/**
 * How the pod says it is ready: an HTTP GET answered 2xx/3xx, a TCP connect, or a command that exits
 * 0 (run in the pod: its environment and directory). `port` defaults to the pod's `PORT`.
 */
export type ReadinessDefinition = { httpGet: { path: string; port?: number } } | { tcpSocket: { port?: number } } | { exec: { command: string[] } };

/** defineProfile's `reload`. */
export type ReloadDefinition = { signal: NodeJS.Signals } | { exec: { command: string[] } };

/** The roles a profile plays. */
export type ProfileRole = 'gateway' | 'backend';

/** `drain.exits`, checked when a profile is made. */
export const DRAIN_END_SCHEMA = z.enum(['when-idle', 'at-timeout'], {
  error: 'must be "when-idle" (it exits once its last connection is gone) or "at-timeout" (it waits out its own shutdown timeout)',
});

export interface DrainPromise {
  /** The pod exits no earlier than this after the delete (a preStop that waits for deprogramming). */
  minDrainSeconds: number;
  /** ... and no later than this: the system's own bound on its graceful stop, plus the preStop. */
  drainTimeoutSeconds: number;
  /**
   * How the system ends its drain: `when-idle` (default), within the scenario's `idleExitMs` of its
   * last connection closing, or `at-timeout`, when its own shutdown timeout runs out whatever the
   * traffic (drainTiming then holds it to drainTimeoutSeconds only).
   */
  exits?: DrainEnd;
}

/** Everything a profile can say; the twin (`naive`) takes the same fields, each replacing the profile's. */
export interface ProfileFields {
  /** One line: what running this profile demonstrates. */
  description: string;
  /**
   * argv of the pod's main process (it receives the stop signal, as PID 1 of a container would).
   * `${NAME}` is replaced by the pod's variable NAME (see PLACEHOLDERS), e.g. `${POD_DIR}/httpd.conf`.
   * A function of the pod when it depends on the role or protocol (one program per protocol).
   */
  command: PerPod<string[]>;
  /**
   * Configuration files rendered for each pod into its own directory (`${POD_DIR}`) before the
   * command starts: file name in the pod directory -> template path (relative to `directory`, or
   * absolute). Every `${NAME}` in a template is replaced the same way.
   */
  config?: Record<string, string>;
  /**
   * Extra variables of the pod, usable as placeholders too. A function of the pod when a value
   * depends on the scenario (nginx's worker_connections from `peak`); its names are then not
   * placeholders the templates are checked against, so a template using them names them in `placeholders`.
   */
  env?: PerPod<Record<string, string>>;
  /** Variables a function `env` sets, declared so that templates may use them as placeholders. */
  placeholders?: string[];
  /** How the pod says it is ready (default: a TCP connect to its `PORT`). */
  readiness?: PerPod<ReadinessDefinition>;
  /** Runs at the delete, before the stop signal: wait for deprogramming (sleep) or start the drain (exec). */
  preStop?: PerPod<PreStop | undefined>;
  /** The signal that starts the graceful stop (the image's STOPSIGNAL); SIGTERM by default. */
  stopSignal?: NodeJS.Signals;
  /**
   * How a running pod takes a new configuration without a restart (the reload scenarios): a signal
   * to the main process (`{ signal: 'SIGHUP' }`) or a command run in the pod (`{ exec: { command } }`,
   * with placeholders). The config templates are rendered again into `${POD_DIR}` first, so the
   * reload reads what a changed ConfigMap would give it. Without it the reload scenarios skip the profile.
   */
  reload?: PerPod<ReloadDefinition | undefined>;
  /** The pod's grace period; the scenario's when not set. */
  terminationGracePeriodSeconds?: PerPod<number | undefined>;
  /** The drain the system promises; the timing assertions take their bounds from it. */
  drain?: PerPod<DrainPromise | undefined>;
  /**
   * Refuses a scenario that asks more than this deployment of the system can carry (a limit of its
   * configuration, not a drain failure): throw ProfileCannotCarry naming the limit, and the run is
   * refused with exit 2 before anything starts, never judged.
   */
  check?: (pod: PodContext) => void;
  /**
   * How the system names itself in responses: `{ header }` (every response carries that header with
   * the pod's name, `${POD_NAME}`), or `'connection'` (it does not: each request is attributed to a
   * pod through the load balancer's record of its connection). Gateways default to
   * `{ header: 'x-zerodrop-gateway' }`, backends to `{ header: 'x-zerodrop-pod' }`; the result says which applies.
   */
  attribution?: Attribution;
  /**
   * On clusters: the container image the command runs in (it needs `sh` when the command uses
   * placeholders or templates). The rendered configuration reaches the pod the same way for every
   * image: an init container on Node.js renders the templates, shipped in a ConfigMap, into the
   * pod's emptyDir at `${POD_DIR}`. Without it, the program's stock image (node, nginx, haproxy,
   * caddy, turnserver) is used, and any other program cannot run on a cluster.
   */
  image?: string;
}

export interface ProfileDefinition extends ProfileFields {
  /** The profile's name in `--profile`, reports and test names: lower case, digits and '-'. */
  name: string;
  /** What the system is in the scenarios' topologies: one role, or both (the reference apps). */
  role: ProfileRole | ProfileRole[];
  /**
   * What it carries; a scenario that needs another protocol is skipped with the reason. A profile
   * playing both roles may say it per role: `{ gateway: ['udp'], backend: ['http'] }`.
   */
  protocols: ProfileProtocol[] | Partial<Record<ProfileRole, ProfileProtocol[]>>;
  /**
   * The directory the command runs in and relative template paths are read from (default: the
   * working directory when the profile is defined, i.e. the config file's project).
   */
  directory?: string;
  /** Programs that must be on PATH, each with the command that installs it (missing: the pair is skipped with it). */
  requires?: Requirement[];
  /** `system` (default: must drain correctly), `reference`, or `mutant` (broken on purpose: must fail). */
  kind?: Exclude<ProfileKind, 'naive'>;
  /**
   * A mutant broken in one thing only (its reload, say): the scenarios that must catch it. Elsewhere
   * it may pass, and nothing is expected of it there.
   */
  caughtBy?: string[];
  /**
   * The system as it behaves with its defaults, named `<name>-naive`, declared as the fields that
   * differ. Expected to fail the scenarios that need the drain it lacks.
   */
  naive?: Partial<ProfileFields> & { description: string };
  /**
   * The settings the drain depends on, each proven necessary by an ablated profile
   * `<name>-without-<setting>` derived from it (gateways only): what it is, why, what removing it
   * changes, which scenarios must then fail, and the weakening as data.
   */
  drainSettings?: DrainSettingDefinition[];
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
  DRAIN_TIMEOUT_SECONDS: "the system's own bound on its graceful stop: the drain's drainTimeoutSeconds minus its minDrainSeconds (5 when no drain is declared); a profile's env may set its own",
  ZERODROP_RUN_ID: 'the run id',
};

const RENDER = fileURLToPath(new URL('fixtures/gateways/render.mjs', `file://${packageRoot}`));
/** render.mjs as the pod's shell names it when the pod starts in the package root (zerodrop's own profiles). */
const RENDER_IN_PACKAGE = 'fixtures/gateways/render.mjs';
const DEFAULT_STOP_TIMEOUT_SECONDS = 5;
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PLACEHOLDER = /\$\{([A-Z][A-Z0-9_]*)\}/g;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
/** The header a gateway's, and a backend's, responses name their pod with unless a profile says otherwise. */
export const DEFAULT_ATTRIBUTION: Readonly<Record<ProfileRole, Attribution>> = { gateway: { header: GATEWAY_HEADER }, backend: { header: POD_HEADER } };

const perPod = <T extends z.ZodType>(schema: T, error: string) => z.union([schema, z.function()], { error });
const port = z.number().int().min(1).max(65_535);
const protocolList = z.array(z.enum(PROTOCOLS, { error: `must be one of ${PROTOCOLS.join(', ')}` })).min(1, 'must name at least one protocol');
const fields = {
  description: z.string({ error: 'must be one line saying what the profile demonstrates' }).min(1, 'must not be empty'),
  command: perPod(z.array(z.string()).min(1, 'must name the program to run'), 'must be the argv of the pod, e.g. ["apache2", "-f", "${POD_DIR}/httpd.conf", "-DFOREGROUND"], or a function of the pod returning one'),
  config: z.record(z.string().regex(/^[\w.-]+$/, 'file names in the pod directory are [A-Za-z0-9_.-]'), z.string({ error: 'must be the path of a template file' })).optional(),
  env: perPod(z.record(z.string().regex(ENV_NAME, 'variable names are upper case, digits and _'), z.string({ error: 'values are strings' })), 'must be { NAME: "value" } or a function of the pod returning one').optional(),
  placeholders: z.array(z.string().regex(ENV_NAME, 'variable names are upper case, digits and _'), { error: 'must list the variable names a function env sets, e.g. ["WORKER_CONNECTIONS"]' }).optional(),
  readiness: perPod(
    z.union([
      z.strictObject({ httpGet: z.strictObject({ path: z.string().startsWith('/'), port: port.optional() }) }),
      z.strictObject({ tcpSocket: z.strictObject({ port: port.optional() }) }),
      z.strictObject({ exec: z.strictObject({ command: z.array(z.string()).min(1) }) }),
    ]),
    'must be { httpGet: { path: "/healthz" } }, { tcpSocket: {} } (each may name a port other than PORT), { exec: { command: ["pg_isready"] } }, or a function of the pod returning one',
  ).optional(),
  preStop: perPod(
    z.union([z.strictObject({ sleep: z.strictObject({ seconds: z.number().min(0) }) }), z.strictObject({ exec: z.strictObject({ command: z.array(z.string()).min(1) }) })]),
    'must be { sleep: { seconds: N } }, { exec: { command: [...] } } or a function of the pod returning one',
  ).optional(),
  stopSignal: z.string().regex(/^SIG[A-Z0-9]+$/, 'must be a signal name like SIGTERM, SIGQUIT, SIGWINCH').optional(),
  reload: perPod(
    z.union([z.strictObject({ signal: z.string().regex(/^SIG[A-Z0-9]+$/, 'must be a signal name like SIGHUP, SIGUSR2') }), z.strictObject({ exec: z.strictObject({ command: z.array(z.string()).min(1) }) })]),
    'must be { signal: "SIGHUP" }, { exec: { command: [...] } } or a function of the pod returning one',
  ).optional(),
  terminationGracePeriodSeconds: perPod(z.number().min(0), 'must be a number of seconds or a function of the pod returning one').optional(),
  drain: perPod(z.strictObject({ minDrainSeconds: z.number().min(0), drainTimeoutSeconds: z.number().min(0), exits: DRAIN_END_SCHEMA.optional() }), 'must be { minDrainSeconds, drainTimeoutSeconds, exits? } or a function of the pod returning one').optional(),
  check: z.custom<(pod: PodContext) => void>((v) => typeof v === 'function', { error: 'must be a function of the pod that throws ProfileCannotCarry when the scenario asks too much' }).optional(),
  attribution: z.union([z.literal('connection'), z.strictObject({ header: z.string().regex(/^[a-z0-9][-a-z0-9]*$/, 'must be a lower-case header name') })], { error: 'must be { header: "x-served-by" } (the response header naming the pod) or "connection" (it names none)' }).optional(),
  image: z.string({ error: 'must be an image reference' }).regex(/^[a-z0-9][\w.\-/:@]*$/, 'must be an image reference, e.g. "httpd:2.4-alpine" or "registry.example.com/team/gw@sha256:..."').optional(),
};
const ROLE = z.enum(['gateway', 'backend'], { error: 'must be "gateway" or "backend"' });
const schema = z.strictObject({
  name: z.string({ error: 'must be a name' }).regex(NAME, 'must be lower case letters, digits and -, e.g. my-gateway'),
  role: z.union([ROLE, z.array(ROLE).min(1)], { error: 'must be "gateway", "backend" or both: ["gateway", "backend"]' }),
  protocols: z.union([protocolList, z.strictObject({ gateway: protocolList.optional(), backend: protocolList.optional() })], {
    error: `must list protocols (${PROTOCOLS.join(', ')}), or per role: { gateway: [...], backend: [...] }`,
  }),
  directory: z.string({ error: 'must be a directory path' }).min(1).optional(),
  requires: z.array(z.strictObject({ binary: z.string().min(1), install: z.string().min(1) }), { error: 'must be [{ binary, install }]' }).optional(),
  kind: z.enum(['system', 'reference', 'mutant'], { error: 'must be "system", "reference" or "mutant"' }).optional(),
  caughtBy: z.array(z.string().min(1), { error: 'must list scenario ids, e.g. ["gateway-reload-http"]' }).optional(),
  naive: z.strictObject({ ...fields, command: fields.command.optional() }).optional(),
  drainSettings: z.array(DRAIN_SETTING_SCHEMA).optional(),
  ...fields,
});

const DEFINED = Symbol.for('zerodrop.definedProfile');

/** Marks a profile made from a definition (defineProfile, defineHelmProfile) as selectable by a config. */
export function markDefined<T extends Profile>(profile: T): T {
  return Object.assign(profile, { [DEFINED]: true });
}

export function isDefinedProfile(value: unknown): value is Profile {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINED] === true;
}

/**
 * The issues as a reader needs them: where a value has the shape of one branch of a union (an array
 * where a list or a function is allowed), that branch's own issues (`protocols[0] = "http3"`), not
 * the union's summary; the summary where no single branch was meant.
 */
function meantIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      // A branch was meant when the value has its shape: none of its issues is about the value as a whole.
      const meant = issue.errors.filter((branch) => branch.every((i) => i.path.length > 0));
      if (meant.length === 1) return meantIssues(meant[0] ?? [], path);
    }
    return [{ ...issue, path }];
  });
}

function problemsOf(error: z.ZodError, input: unknown, where: string): string[] {
  return meantIssues(error.issues).map((issue) => {
    const path = issue.path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
    if (issue.code === 'unrecognized_keys') {
      const fields = issue.path.length === 0 ? `; fields: ${Object.keys(schema.shape).join(', ')}` : '';
      return `${where}${path ? `.${path}: ` : ': '}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${fields}`;
    }
    let value: unknown = input;
    for (const key of issue.path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
    return `${where}.${path} = ${typeof value === 'function' ? '(function)' : (JSON.stringify(value) ?? 'undefined')}: ${issue.message}`;
  });
}

/** Placeholders a text uses that no pod of this profile provides. */
function unknownPlaceholders(text: string, names: ReadonlySet<string>): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string).filter((name) => !(name in PLACEHOLDERS) && !names.has(name));
}

function templatePath(path: string, directory: string): string {
  return isAbsolute(path) ? path : resolve(directory, path);
}

const rolesOf = (def: Pick<ProfileDefinition, 'role'>): ProfileRole[] => (Array.isArray(def.role) ? def.role : [def.role]);
const protocolsOf = (def: Pick<ProfileDefinition, 'protocols'>, role: ProfileRole): ProfileProtocol[] => (Array.isArray(def.protocols) ? def.protocols : (def.protocols[role] ?? []));
const directoryOf = (def: Pick<ProfileDefinition, 'directory'>): string => (def.directory === undefined ? process.cwd() : resolve(def.directory));

/**
 * Checks what the schema cannot: every template file exists and every placeholder of the command
 * and the templates is provided; the roles and their protocols agree; each drain setting's
 * weakening names something the profile has.
 */
function checkFields(where: string, def: ProfileDefinition, f: Partial<ProfileFields> & { drainSettings?: DrainSettingDefinition[] }): string[] {
  const problems: string[] = [];
  const directory = directoryOf(def);
  const env = typeof f.env === 'object' ? f.env : {};
  const names = new Set([...Object.keys(env), ...(f.placeholders ?? [])]);
  const known = () => [...Object.keys(PLACEHOLDERS), ...names].join(', ');
  if (Array.isArray(f.command)) {
    f.command.forEach((arg, i) => {
      const unknown = unknownPlaceholders(arg, names);
      if (unknown.length > 0) problems.push(`${where}.command[${i}] = ${JSON.stringify(arg)}: unknown placeholder ${unknown.map((u) => `\${${u}}`).join(', ')}; placeholders: ${known()}, or add it to env`);
    });
  }
  const templates: string[] = [];
  for (const [file, path] of Object.entries(f.config ?? {})) {
    let text: string;
    try {
      text = readFileSync(templatePath(path, directory), 'utf8');
    } catch (error) {
      problems.push(`${where}.config.${file} = ${JSON.stringify(path)}: cannot read the template (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); paths are relative to ${directory}`);
      continue;
    }
    templates.push(text);
    const unknown = [...new Set(unknownPlaceholders(text, names))];
    if (unknown.length > 0) problems.push(`${where}.config.${file} (${path}): unknown placeholder ${unknown.map((u) => `\${${u}}`).join(', ')}; placeholders: ${known()}, or add it to env`);
  }
  const seen = new Set<string>();
  (f.drainSettings ?? []).forEach((setting, i) => {
    const at = `${where}.drainSettings[${i}]`;
    if (seen.has(setting.name)) problems.push(`${at}.name = ${JSON.stringify(setting.name)}: listed twice; each setting names its own ablated profile`);
    seen.add(setting.name);
    for (const marker of setting.dropLines ?? []) {
      if (!templates.some((t) => t.split('\n').some((line) => line.includes(marker)))) {
        problems.push(`${at}.dropLines: ${JSON.stringify(marker)} matches no line of the config templates (${Object.values(f.config ?? {}).join(', ') || 'none'}); copy a part of the line the setting is on`);
      }
    }
    if (setting.remove === 'preStop' && f.preStop === undefined) problems.push(`${at}.remove = "preStop": the profile has no preStop to remove`);
    if (setting.remove === 'stopSignal' && f.stopSignal === undefined) problems.push(`${at}.remove = "stopSignal": the profile states no stopSignal to remove`);
    if (setting.grace !== undefined && f.drain === undefined) problems.push(`${at}.grace = "preStop+1": the profile declares no drain whose minimum it is measured from`);
    for (const name of setting.unsetEnv ?? []) {
      if (typeof f.env === 'object' && !(name in env)) problems.push(`${at}.unsetEnv: ${name} is not in the profile's env (${Object.keys(env).join(', ') || 'none'})`);
    }
  });
  return problems;
}

/** What the schema cannot check of the roles: protocols given per role match the roles played; drain settings are a gateway's. */
function checkRoles(where: string, def: ProfileDefinition): string[] {
  const problems: string[] = [];
  const roles = rolesOf(def);
  if (!Array.isArray(def.protocols)) {
    for (const role of roles) if (!def.protocols[role]) problems.push(`${where}.protocols = ${JSON.stringify(def.protocols)}: says nothing for the role "${role}"; add ${role}: [...]`);
    for (const role of Object.keys(def.protocols)) if (!roles.includes(role as ProfileRole)) problems.push(`${where}.protocols.${role}: the profile does not play the role "${role}"; add it to role or remove it here`);
  }
  if (def.drainSettings !== undefined && !roles.includes('gateway')) problems.push(`${where}.drainSettings: ablations are derived for gateways only; remove them or add "gateway" to role`);
  if (def.directory !== undefined && !existsSync(resolve(def.directory))) problems.push(`${where}.directory = ${JSON.stringify(def.directory)}: no directory at ${resolve(def.directory)}`);
  return problems;
}

/** A defined profile; `naive` is its twin when one was declared (select it as `profiles: [p, p.naive]`). */
export type DefinedProfile = Profile & { readonly naive?: Profile };

/**
 * A system under test: validated now (a UsageError naming every bad field), usable in a config's
 * `profiles` like a built-in name.
 */
export function defineProfile(definition: ProfileDefinition): DefinedProfile {
  const where = `defineProfile(${typeof (definition as { name?: unknown })?.name === 'string' ? (definition as { name: string }).name : '?'})`;
  const parsed = schema.safeParse(definition);
  const problems = parsed.success ? [] : problemsOf(parsed.error, definition, where);
  if (parsed.success) {
    problems.push(...checkRoles(where, definition), ...checkFields(where, definition, definition));
    if (definition.naive) problems.push(...checkFields(`${where}.naive`, definition, { ...definition, drainSettings: [], ...definition.naive }));
  }
  if (problems.length > 0) throw new UsageError(problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`);
  const profile = toProfile(definition, definition.kind ?? 'system');
  if (!definition.naive) return profile;
  const { naive, drainSettings: _, ...rest } = definition;
  return Object.assign(profile, { naive: toProfile({ ...rest, ...naive, name: `${definition.name}-naive` }, 'naive') });
}

const resolvePerPod = <T>(value: PerPod<T> | undefined, pod: PodContext): T | undefined =>
  typeof value === 'function' ? (value as (pod: PodContext) => T)(pod) : value;

/** A shell word: `${NAME}` stays a variable the pod's shell expands; everything else is literal. */
export function shellWord(arg: string): string {
  return arg
    .split(/(\$\{[A-Z][A-Z0-9_]*\})/)
    .map((part, i) => (i % 2 === 1 ? `"${part}"` : part === '' ? '' : `'${part.replaceAll("'", `'\\''`)}'`))
    .join('') || "''";
}

/**
 * The pod's argv. A command with nothing to render, no placeholder and defined in the package (the
 * directory a local pod starts in) runs as it is. Otherwise a shell renders the templates into the
 * pod directory (render.mjs), exports POD_DIR, goes to the profile's directory (so that relative
 * paths mean what they meant there), and `exec`s the system, so that it is the pod's main process
 * and gets the stop signal itself.
 */
export function podCommand(command: readonly string[], config: Record<string, string>, directory: string): string[] {
  const inPackage = resolve(directory) === resolve(packageRoot);
  const steps: string[] = [];
  const render = renderStep(config, directory);
  if (render !== undefined) steps.push(`POD_DIR=$(${render}) && export POD_DIR`);
  if (!inPackage) steps.push(`cd ${shellWord(directory)}`);
  if (steps.length === 0 && !command.some((arg) => arg.match(PLACEHOLDER))) return [...command];
  return ['sh', '-c', [...steps, `exec ${command.map(shellWord).join(' ')}`].join(' && ')];
}

/** The shell command that renders the templates into the pod directory and prints it; undefined without templates. */
function renderStep(config: Record<string, string>, directory: string): string | undefined {
  const inPackage = resolve(directory) === resolve(packageRoot);
  const templates = Object.entries(config).map(([file, path]) => {
    const absolute = templatePath(path, directory);
    return shellWord(`${file}=${inPackage && !isAbsolute(path) ? path : absolute}`);
  });
  if (templates.length === 0) return undefined;
  return `"$ZERODROP_NODE" ${shellWord(inPackage ? RENDER_IN_PACKAGE : RENDER)} ${templates.join(' ')}`;
}

/** The pod's reload as the Workload carries it: the re-render first, an exec run like the command. */
function reloadPlan(reload: ReloadDefinition, config: Record<string, string>, directory: string): Reload {
  const render = renderStep(config, directory);
  const how: Reload = 'signal' in reload ? { signal: reload.signal } : { exec: { command: podCommand(reload.exec.command, {}, directory) } };
  return render === undefined ? how : { ...how, render: ['sh', '-c', `${render} >/dev/null`] };
}

function probeHandler(readiness: ReadinessDefinition | undefined, podPort: number): ProbeHandler {
  if (readiness === undefined) return { tcpSocket: { port: podPort } };
  if ('httpGet' in readiness) return { httpGet: { port: readiness.httpGet.port ?? podPort, path: readiness.httpGet.path } };
  if ('exec' in readiness) return { exec: { command: readiness.exec.command } };
  return { tcpSocket: { port: readiness.tcpSocket.port ?? podPort } };
}

function toProfile(def: ProfileDefinition, kind: ProfileKind): Profile {
  const directory = directoryOf(def);
  const plan = (pod: PodContext): GatewayPlan => {
    const carried = protocolsOf(def, pod.role);
    if (!carried.includes(pod.protocol)) {
      throw new ProfileCannotPlay(`profile ${def.name} carries ${carried.join(', ')}${rolesOf(def).length > 1 ? ` as a ${pod.role}` : ''}, not ${pod.protocol}`);
    }
    def.check?.(pod);
    const drain = resolvePerPod(def.drain, pod);
    const preStop = resolvePerPod(def.preStop, pod);
    const reload = resolvePerPod(def.reload, pod);
    const grace = resolvePerPod(def.terminationGracePeriodSeconds, pod);
    const command = resolvePerPod(def.command, pod) ?? [];
    // The system's own bound on its graceful stop: what the promised drain leaves after the minimum
    // drain (the preStop's wait), whatever the preStop does.
    const stopTimeout = drain ? Math.max(1, drain.drainTimeoutSeconds - drain.minDrainSeconds) : DEFAULT_STOP_TIMEOUT_SECONDS;
    const argv = podCommand(command, def.config ?? {}, directory);
    return {
      command: argv,
      env: { ZERODROP_NODE: process.execPath, PORT: String(pod.port), DRAIN_TIMEOUT_SECONDS: String(stopTimeout), ...resolvePerPod(def.env, pod) },
      readinessProbe: defaultProbe(probeHandler(resolvePerPod(def.readiness, pod), pod.port)),
      attribution: def.attribution ?? DEFAULT_ATTRIBUTION[pod.role],
      ...(def.image ? { image: def.image } : {}),
      // The same pod for cluster renderers: the system's own argv and its templates (manifests.ts).
      ...(JSON.stringify(argv) === JSON.stringify(command) ? {} : { defined: { argv: command, templates: readTemplates(def.config ?? {}, directory) } }),
      ...(preStop ? { preStop } : {}),
      ...(def.stopSignal ? { stopSignal: def.stopSignal } : {}),
      ...(reload ? { reload: reloadPlan(reload, def.config ?? {}, directory) } : {}),
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
      ...(drain ? { drain } : {}),
    };
  };
  const roles = rolesOf(def);
  const profile: Profile = {
    name: def.name,
    kind,
    description: def.description,
    requires: def.requires ?? [],
    ...(def.caughtBy ? { caughtBy: def.caughtBy } : {}),
    ...(roles.includes('gateway')
      ? {
          gateway: (request) =>
            plan({
              role: 'gateway',
              protocol: request.protocol,
              port: request.port,
              programmingDelayMs: request.programmingDelayMs ?? 0,
              programmingSpreadMs: request.programmingSpreadMs ?? 0,
              ...(request.graceSeconds !== undefined ? { graceSeconds: request.graceSeconds } : {}),
              backendService: request.backendService,
              backendPort: request.backendPort,
              ...(request.peak !== undefined ? { peak: request.peak } : {}),
            }),
        }
      : {}),
    ...(roles.includes('backend')
      ? {
          backend: (request): BackendPlan => {
            const { command, env, readinessProbe, preStop, attribution, image, defined } = plan({ role: 'backend', protocol: request.protocol ?? 'http', port: request.port, programmingDelayMs: 0, programmingSpreadMs: 0 });
            return { command, env, readinessProbe, ...(preStop ? { preStop } : {}), ...(attribution ? { attribution } : {}), ...(image ? { image } : {}), ...(defined ? { defined } : {}) };
          },
        }
      : {}),
    ...(def.drainSettings ? { drainSettings: def.drainSettings.map(compileDrainSetting) } : {}),
  };
  return markDefined(profile);
}

/** The templates' text by pod file name, for a cluster's ConfigMap (read per plan: small files, and an edit shows at once). */
function readTemplates(config: Record<string, string>, directory: string): Record<string, string> {
  return Object.fromEntries(Object.entries(config).map(([file, path]) => [file, readFileSync(templatePath(path, directory), 'utf8')]));
}
