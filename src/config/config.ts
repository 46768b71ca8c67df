// zerodrop.config.ts: the settings a team commits next to its gateway, typed with defineConfig and
// loaded by dynamic import (Node strips the types). Flags override it, field by field. A bad field
// is reported with its name, its value and what is allowed, and nothing starts (exit 2).

import { MAX_NODES } from '../providers/netns/address-plan.ts';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { findProfile, profiles } from '../profiles/index.ts';
import { isDefinedProfile, markDefined } from '../profiles/define.ts';
import { ablationsOf } from '../profiles/ablation.ts';
import type { Profile } from '../profiles/profile.ts';
import { PROVIDER_NAMES } from '../providers/index.ts';
import type { ReporterName } from '../report/reporters/reporter.ts';
import type { Implementation } from '../report/results.ts';
import { catalog } from '../scenarios/index.ts';
import { UsageError } from './usage-error.ts';
import { loadProjectFilesAsModules } from './config-module-hook.ts';
import { DRIVERS, type LoadDriver } from '../load/drivers.ts';
import { optionProblem } from '../scenarios/option-kinds.ts';
import { dnsLabelProblem, durationMs, kubeconfigProblem, kubeVersionProblem, reportDirProblem, reporterProblem } from './checks.ts';
import { clusterSystemArgs, labelSelectorProblem, objectNameProblem, pairsProblem, type ClusterSystemConfig } from './cluster-system-args.ts';

/** ClusterSystemConfig: gatewayClassName, dataplaneSelector, namespaceLabels, namespaceAnnotations, gatewayTimeouts (cluster-system-args.ts). */
export interface ZerodropConfig extends ClusterSystemConfig {
  /** Where pods run (default local). */
  provider?: (typeof PROVIDER_NAMES)[number];
  /** Systems under test (default ['reference']): built-in names (`zerodrop list`) and profiles made with defineProfile. */
  profiles?: (string | Profile)[];
  /** Scenario ids (default: the catalog except controls). */
  scenarios?: string[];
  /** Scenario option overrides, like `--set key=value`. */
  set?: Record<string, number>;
  /** Realistic durations instead of the short defaults. */
  nightly?: boolean;
  /** Where the reports go (default reports). */
  reportDir?: string;
  /** Which reporters hear the run (default all: json, html, junit, conformance); a path names a reporter module (./my-reporter.ts). */
  reporters?: (ReporterName | (string & {}))[];
  /** Open the HTML report when the run ends. */
  open?: boolean;
  /**
   * kind, k3s: Kubernetes minor version of the nodes; netns: a release kubernetes/ pins (v1.36.3), or
   * its minor. netns, a list: the selection runs on each in turn, each version's reports in
   * reportDir/<version>/, compared in reportDir (run() then resolves with every version's result).
   */
  kubeVersion?: string | string[];
  /** kind: cluster name. */
  clusterName?: string;
  /** netns: number of nodes (default 2). */
  nodes?: number;
  /** cluster: kubeconfig file and context. */
  kubeconfig?: string;
  context?: string;
  /** Names the system in conformance.yaml (Gateway API ConformanceReport `implementation`). */
  implementation?: Implementation;
  /** Which client carries out the loads: builtin (default), hey or iperf3; see the README's cross-checking section. */
  driver?: LoadDriver;
  /** Scenario x profile pairs run at once, each on a provider of its own (default 1; timing-sensitive scenarios want the machine to themselves). */
  workers?: number;
  /** Local provider: the seed of the Service load balancers' per-node programming lags, as a result prints it (replays them). */
  seed?: number;
}

/**
 * The profiles a config defines (defineProfile), with the ablation each of their drain settings
 * derives (`<name>-without-<setting>`): selectable by name as the built-ins' are, run only when named.
 */
export function definedProfiles(config: ZerodropConfig): Profile[] {
  const defined = (config.profiles ?? []).filter((p): p is Profile => typeof p !== 'string');
  return [...defined, ...ablationsOf(defined).map(markDefined)];
}

/** Identity, for types and editor completion: `export default defineConfig({ ... })`. */
export function defineConfig(config: ZerodropConfig): ZerodropConfig {
  return config;
}

export const CONFIG_FILES = ['zerodrop.config.ts', 'zerodrop.config.mts', 'zerodrop.config.mjs', 'zerodrop.config.js'];

const oneOf = (allowed: readonly string[], what: string) =>
  z.string().refine((v) => allowed.includes(v), { message: `unknown ${what}; allowed: ${allowed.join(', ')}` });

/** A string checked by one of the shared checks (checks.ts), so flags and config say the same thing. */
const checked = (problem: (value: string) => string | undefined, notString: string) =>
  z.string({ error: notString }).superRefine((value, ctx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });

/** Namespace labels or annotations, checked as --namespace-labels and --namespace-annotations are. */
const namespacePairs = (what: 'labels' | 'annotations') =>
  z.record(z.string(), z.string({ error: 'must be a string' })).superRefine((value, ctx) => {
    const message = pairsProblem(value, what);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  });

const gatewayWait = checked((v) => (durationMs(v) ? undefined : 'expected a duration like 300s or 5m'), 'must be a duration like 300s');

/** `set` values are checked against the option's kind, as `--set` is. */
function checkSet(set: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const [key, value] of Object.entries(set)) {
    if (!catalog.some((s) => key in s.defaults)) {
      const options = [...new Set(catalog.flatMap((s) => Object.keys(s.defaults)))].sort();
      ctx.addIssue({ code: 'custom', path: [key], message: `no scenario has this option; options: ${options.join(', ')}` });
      continue;
    }
    const problem = typeof value === 'number' ? optionProblem(key, value) : `${optionProblem(key, NaN) ?? ''}`;
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: problem });
  }
}

/**
 * Every name `--profile` takes: the built-ins, their ablations and the ablations of the profiles the
 * list itself defines (`<profile>-without-<setting>`, see `zerodrop list`).
 */
function knownProfileNames(list: (string | Profile)[], ctx: z.RefinementCtx): void {
  const own = ablationsOf(list.filter((p): p is Profile => typeof p !== 'string')).map((p) => p.name);
  list.forEach((p, i) => {
    if (typeof p !== 'string' || findProfile(p) !== undefined || own.includes(p)) return;
    ctx.addIssue({ code: 'custom', path: [i], message: unknownProfile(own) });
  });
}

function unknownProfile(own: readonly string[]): string {
  return `unknown profile; allowed: ${[...profiles.map((b) => b.name), ...own].join(', ')}, a drain-correct one's ablation (<profile>-without-<setting>, see \`zerodrop list\`), or a profile made with defineProfile`;
}

/** A defined profile may not take a built-in's name, nor two profiles one name: names select pairs and name reports. */
function uniqueProfileNames(list: (string | Profile)[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  list.forEach((p, i) => {
    const name = typeof p === 'string' ? p : p.name;
    if (typeof p !== 'string' && profiles.some((b) => b.name === name && b !== p)) {
      ctx.addIssue({ code: 'custom', path: [i], message: `defineProfile name "${name}" is a built-in profile's; choose another name` });
    } else if (seen.has(name)) {
      ctx.addIssue({ code: 'custom', path: [i], message: `profile "${name}" is listed twice` });
    }
    seen.add(name);
  });
}

const kubeVersionField = checked((v) => kubeVersionProblem(v), 'must be a Kubernetes version like v1.33');

const schema = z.strictObject({
  provider: oneOf(PROVIDER_NAMES, 'provider').optional(),
  profiles: z
    .array(
      z.custom<string | Profile>((v) => isDefinedProfile(v) || typeof v === 'string', { error: unknownProfile([]) }),
    )
    .min(1, 'must name at least one profile')
    .superRefine(knownProfileNames)
    .superRefine(uniqueProfileNames)
    .optional(),
  scenarios: z.array(oneOf(catalog.map((s) => s.id), 'scenario')).min(1, 'must name at least one scenario').optional(),
  set: z.record(z.string(), z.unknown()).superRefine(checkSet).optional(),
  nightly: z.boolean({ error: 'must be true or false' }).optional(),
  reportDir: checked(reportDirProblem, 'must be a directory path').optional(),
  reporters: z.array(checked(reporterProblem, 'must be a reporter name or the path of a reporter module')).optional(),
  open: z.boolean({ error: 'must be true or false' }).optional(),
  kubeVersion: z
    .union([kubeVersionField, z.array(kubeVersionField).min(1, 'must name at least one Kubernetes version')], { error: 'must be a Kubernetes version like v1.33, or a list of them' })
    .optional(),
  clusterName: checked(dnsLabelProblem, 'must be a DNS label').optional(),
  nodes: z.number({ error: `must be a whole number from 1 to ${MAX_NODES}` }).int(`must be a whole number from 1 to ${MAX_NODES}`).min(1, `must be a whole number from 1 to ${MAX_NODES}`).max(MAX_NODES, `must be a whole number from 1 to ${MAX_NODES}`).optional(),
  kubeconfig: checked((v) => kubeconfigProblem(v), 'must be the path of a kubeconfig file').optional(),
  context: z.string({ error: 'must be a kubeconfig context name' }).trim().min(1, 'must not be empty').optional(),
  implementation: z
    .strictObject({
      organization: z.string().optional(),
      project: z.string().optional(),
      url: z.url({ error: 'must be a URL like https://example.com/project' }).optional(),
      version: z.string().optional(),
      contact: z.array(z.string()).optional(),
    })
    .optional(),
  driver: oneOf(DRIVERS, 'driver').optional(),
  workers: z
    .number({ error: 'must be a whole number from 1 to 64' })
    .int('must be a whole number from 1 to 64')
    .min(1, 'must be a whole number from 1 to 64')
    .max(64, 'must be a whole number from 1 to 64')
    .optional(),
  seed: z
    .number({ error: 'must be a whole number from 0 to 4294967295 (a result\'s seed)' })
    .int('must be a whole number from 0 to 4294967295 (a result\'s seed)')
    .min(0, 'must be a whole number from 0 to 4294967295 (a result\'s seed)')
    .max(0xffff_ffff, 'must be a whole number from 0 to 4294967295 (a result\'s seed)')
    .optional(),
  gatewayClassName: checked(objectNameProblem, 'must be the name of a GatewayClass').optional(),
  dataplaneSelector: checked(labelSelectorProblem, 'must be a label selector like app=edge-proxy').optional(),
  namespaceLabels: namespacePairs('labels').optional(),
  namespaceAnnotations: namespacePairs('annotations').optional(),
  gatewayTimeouts: z
    .strictObject({ gatewayClassMustBeAccepted: gatewayWait.optional(), gatewayMustHaveCondition: gatewayWait.optional(), gatewayMustHaveAddress: gatewayWait.optional() })
    .optional(),
});

const FIELDS = Object.keys(schema.shape);

/** The fields of a nested object field (implementation, gatewayTimeouts), for an unknown key inside it. */
function fieldsOf(field: PropertyKey | undefined): string[] {
  const value = schema.shape[field as keyof typeof schema.shape] as z.ZodType | undefined;
  const inner = value instanceof z.ZodOptional ? value.unwrap() : value;
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) v = typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
}

/** Validates a config object; throws UsageError naming every bad field, its value and what is allowed. */
export function validateConfig(input: unknown, source: string): ZerodropConfig {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data as ZerodropConfig;
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length > 0 ? `${pathText(issue.path)}: ` : '';
      return `${where}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; allowed: ${(issue.path.length > 0 ? fieldsOf(issue.path[0]) : FIELDS).join(', ')}`;
    }
    const value = valueAt(input, issue.path);
    const shown = isDefinedProfile(value) ? `defineProfile(${value.name})` : (JSON.stringify(value) ?? 'undefined');
    return `${pathText(issue.path) || '(config)'} = ${shown}: ${issue.message}`;
  });
  throw new UsageError(`${source}: ${problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`}`);
}

/**
 * Loads `explicit` (an error if missing), or the first CONFIG_FILES found in `cwd`, or nothing.
 * Returns the validated config and the file it came from.
 */
export async function loadConfig(explicit: string | undefined, cwd = process.cwd()): Promise<{ config: ZerodropConfig; file?: string }> {
  let file: string | undefined;
  if (explicit !== undefined) {
    file = resolve(cwd, explicit);
    if (!existsSync(file)) throw new UsageError(`--config ${explicit}: file not found`);
  } else {
    file = CONFIG_FILES.map((name) => resolve(cwd, name)).find((path) => existsSync(path));
    if (file === undefined) return { config: {} };
  }
  let module: { default?: unknown; config?: unknown };
  loadProjectFilesAsModules(dirname(file));
  try {
    module = (await import(pathToFileURL(file).href)) as { default?: unknown; config?: unknown };
  } catch (error) {
    throw new UsageError(`${file}: could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  const value = module.default ?? module.config;
  if (value === undefined) throw new UsageError(`${file}: export the config as default: export default defineConfig({ ... })`);
  return { config: validateConfig(value, file), file };
}

/** Which run flags appear in argv (`--name` or `--name=value`), and the keys given with --set. */
function givenFlags(argv: readonly string[]): { flags: Set<string>; setKeys: Set<string> } {
  const flags = new Set<string>();
  const setKeys = new Set<string>();
  argv.forEach((arg, i) => {
    if (!arg.startsWith('--')) return;
    const [name = '', inline] = arg.slice(2).split(/=(.*)/s);
    flags.add(name);
    if (name === 'set') {
      const value = inline ?? argv[i + 1] ?? '';
      setKeys.add(value.split('=')[0] ?? '');
    }
  });
  return { flags, setKeys };
}

/** The config as `zerodrop run` flags, leaving out what argv already says: flags win, field by field. */
export function configArgs(config: ZerodropConfig, argv: readonly string[]): string[] {
  const { flags, setKeys } = givenFlags(argv);
  const out: string[] = [];
  const single = (flag: string, value: string | undefined) => {
    if (value !== undefined && !flags.has(flag)) out.push(`--${flag}`, value);
  };
  const many = (flag: string, values: readonly string[] | undefined) => {
    if (values !== undefined && !flags.has(flag)) for (const v of values) out.push(`--${flag}`, v);
  };
  single('provider', config.provider);
  many('profile', config.profiles?.map((p) => (typeof p === 'string' ? p : p.name)));
  many('scenario', config.scenarios);
  for (const [key, value] of Object.entries(config.set ?? {})) if (!setKeys.has(key)) out.push('--set', `${key}=${value}`);
  if (config.nightly === true && !flags.has('nightly') && !flags.has('no-nightly')) out.push('--nightly');
  single('report-dir', config.reportDir);
  many('reporter', config.reporters);
  if (config.open === true && !flags.has('open') && !flags.has('no-open')) out.push('--open');
  many('kube-version', typeof config.kubeVersion === 'string' ? [config.kubeVersion] : config.kubeVersion);
  single('cluster-name', config.clusterName);
  single('nodes', config.nodes?.toString());
  single('kubeconfig', config.kubeconfig);
  single('context', config.context);
  single('driver', config.driver);
  single('workers', config.workers?.toString());
  single('seed', config.seed?.toString());
  for (const [flag, value] of clusterSystemArgs(config)) single(flag, value);
  return out;
}

/** The --config value in argv, if any. */
export function configFlag(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--config') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError('--config: expects a file, e.g. --config zerodrop.config.ts');
      return next;
    }
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}
