// defineHelmProfile: a gateway installed from a team's own Helm chart, on the cluster providers.
// The only way a chart profile is made: the built-in envoy-gateway, stunner and ingress-nginx are
// definitions too (helm-gateways.ts). A chart and its values per run, the objects that route the scenario's
// traffic to its backend Service, the dataplane's grace period and the drain it promises.
// Validated when it is made: a wrong field is a UsageError naming the field, the value and the fix.

import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../config/usage-error.ts';
import { helmProfile, RELEASE_NAME_MAX, type ChartContext, type ChartObject, type HelmProfileSpec } from './helm-charts.ts';
import { DRAIN_END_SCHEMA, markDefined, type DrainPromise } from './define.ts';
import type { Profile } from './profile.ts';

/** The label the dataplane pods must carry (through the chart's values), with the ChartContext's `workload` as its value. */
export const DATAPLANE_LABEL = 'zerodrop.dev/workload';

/**
 * A per-run name for the cluster-scoped objects a definition's `objects` create (a GatewayClass, a
 * cluster-scoped CR): they outlive the run's namespace, so two runs on one cluster must never share one.
 */
export const perRunName = (namespace: string): string => `zerodrop-${namespace.replace(/^zerodrop-/, '')}`;

export interface HelmProfileFields {
  description: string;
  /** Values for the run (an object, or a function of the run's ChartContext); they must label the dataplane pods DATAPLANE_LABEL=ctx.workload. */
  values?: Record<string, unknown> | ((ctx: ChartContext) => Record<string, unknown>);
  /** Values files (relative to the working directory), given to helm before `values`. */
  valuesFiles?: string[];
  /** Objects applied after the chart that route the scenario's traffic to `ctx.dataplane.routesTo` (a Gateway and HTTPRoute, an Ingress, ...). */
  objects?: (ctx: ChartContext) => ChartObject[];
  /** The dataplane pods' terminationGracePeriodSeconds, as the chart's settings make it. */
  terminationGracePeriodSeconds: number;
  /** The drain the chart's settings promise; the timing assertions take their bounds from it. */
  drain?: DrainPromise;
  /**
   * The labels of the dataplane pods the chart creates (a label selector, matched within the run's
   * namespace, where the release is the run's own), e.g. `{ 'app.kubernetes.io/name': 'my-gateway' }`.
   * Without it the values must label them DATAPLANE_LABEL=ctx.workload.
   */
  dataplaneSelector?: Record<string, string>;
  /**
   * The Deployment the chart runs its controller in (in the release's namespace, e.g.
   * `{ deployment: 'my-gateway-controller' }`): the scenarios that restart the control plane under
   * load restart it. Without it they skip the profile.
   */
  controller?: { deployment: string };
}

export interface HelmProfileDefinition extends HelmProfileFields {
  name: string;
  chart: {
    /** Chart name in `repo`, an oci:// reference, or a local chart directory or .tgz (relative to the working directory). */
    chart: string;
    repo?: string;
    /** Required for repository and OCI charts. */
    version?: string;
    /** Start of the release name, to which each run adds its own id (default: `name`). */
    release?: string;
  };
  /** Where the settings come from (the documentation of the drain the values and objects configure). */
  docs?: string;
  /** What the dataplane carries: `http` (an HTTPRoute or Ingress) or `turn` (a UDPRoute). */
  protocols: ('http' | 'turn')[];
  /** The dataplane's container port for a listener on `port` (default: the same port). */
  dataplanePort?: (port: number) => number;
  /** The chart as it behaves with its defaults, named `<name>-naive`: the fields that differ. */
  naive?: Partial<HelmProfileFields> & { description: string };
}

/** Kubernetes label syntax (apimachinery's validation: qualified names, label values). */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** Room left in helm's release name for the run's id (releaseName() adds it, hashed when long). */
const RELEASE_PREFIX_MAX = 30;

const fields = {
  description: z.string().min(1, 'must be one line saying what the profile demonstrates'),
  values: z.union([z.record(z.string(), z.unknown()), z.function()], { error: 'must be an object of values or a function of the run returning one' }).optional(),
  valuesFiles: z.array(z.string().min(1), { error: 'must be a list of values file paths' }).optional(),
  objects: z.custom<(ctx: ChartContext) => ChartObject[]>((v) => typeof v === 'function', { error: 'must be a function of the run returning the objects that route to the backend' }).optional(),
  terminationGracePeriodSeconds: z.number({ error: 'must be the dataplane pods\' grace period in seconds' }).min(0),
  drain: z.strictObject({ minDrainSeconds: z.number().min(0), drainTimeoutSeconds: z.number().min(0), exits: DRAIN_END_SCHEMA.optional() }, { error: 'must be { minDrainSeconds, drainTimeoutSeconds, exits? }' }).optional(),
  dataplaneSelector: z
    .record(
      z.string(),
      z.string().regex(LABEL_VALUE, 'label values are at most 63 of [A-Za-z0-9_.-], starting and ending alphanumeric'),
      // The record's own message only for a value that is no object: a bad value keeps its own.
      { error: (issue) => (issue.code === 'invalid_type' ? "must be the dataplane pods' labels, e.g. { 'app.kubernetes.io/name': 'my-gateway' }" : undefined) },
    )
    .superRefine((labels, ctx) => {
      if (Object.keys(labels).length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one label' });
      for (const key of Object.keys(labels)) if (!LABEL_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'label keys are [prefix/]name, e.g. app.kubernetes.io/name' });
    })
    .optional(),
  controller: z
    .strictObject(
      { deployment: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be the Deployment\'s name: lower case letters, digits and -') },
      { error: "must be { deployment: '<the controller Deployment's name>' }" },
    )
    .optional(),
};
const schema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lower case letters, digits and -'),
    chart: z.strictObject({
      chart: z.string().min(1, 'must name the chart'),
      repo: z.url({ error: 'must be the chart repository URL' }).optional(),
      version: z.string().min(1).optional(),
      release: z
        .string()
        .max(RELEASE_PREFIX_MAX, `must be at most ${RELEASE_PREFIX_MAX} characters: the run's id is added to it within helm's ${RELEASE_NAME_MAX}`)
        .regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label: lower case letters, digits and -, starting with a letter, e.g. "my-gw"')
        .optional(),
    }),
    docs: z.string().min(1, 'must say where the settings come from (a documentation URL)').optional(),
    protocols: z.array(z.enum(['http', 'turn'], { error: 'must be "http" or "turn"' })).min(1),
    dataplanePort: z.function().optional(),
    naive: z.strictObject({ ...fields, terminationGracePeriodSeconds: fields.terminationGracePeriodSeconds.optional() }).optional(),
    ...fields,
  })
  .superRefine((def, ctx) => {
    const local = def.chart.chart.startsWith('.') || isAbsolute(def.chart.chart);
    if (!local && def.chart.version === undefined) ctx.addIssue({ code: 'custom', path: ['chart', 'version'], message: 'a repository or OCI chart needs its version pinned, e.g. "1.9.3"' });
    if (local && !existsSync(resolve(def.chart.chart))) ctx.addIssue({ code: 'custom', path: ['chart', 'chart'], message: `no chart at ${resolve(def.chart.chart)}` });
    if (!local && !def.chart.chart.startsWith('oci://') && def.chart.repo === undefined) ctx.addIssue({ code: 'custom', path: ['chart', 'repo'], message: 'a chart by name needs its repository URL (or give an oci:// reference or a local path)' });
    for (const [i, file] of (def.valuesFiles ?? []).entries()) if (!existsSync(resolve(file))) ctx.addIssue({ code: 'custom', path: ['valuesFiles', i], message: `no file at ${resolve(file)}` });
  });

/** A chart profile, usable in a config's `profiles` on the kind, k3s and cluster providers, and on netns when its chart is a directory (the local provider skips it with the reason). */
export function defineHelmProfile(definition: HelmProfileDefinition): Profile & { readonly naive?: Profile } {
  const parsed = schema.safeParse(definition);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const path = issue.path.map(String).join('.');
      let value: unknown = definition;
      for (const key of issue.path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
      return `defineHelmProfile(${definition.name}).${path} = ${typeof value === 'function' ? '(function)' : (JSON.stringify(value) ?? 'undefined')}: ${issue.message}`;
    });
    throw new UsageError(problems.length === 1 ? (problems[0] as string) : `\n  ${problems.join('\n  ')}`);
  }
  const spec = (def: Omit<HelmProfileDefinition, 'naive'>, naive: boolean): HelmProfileSpec => {
    const chart = def.chart.chart.startsWith('.') || isAbsolute(def.chart.chart) ? resolve(def.chart.chart) : def.chart.chart;
    const values = def.values;
    return {
      name: naive ? `${def.name}-naive` : def.name,
      naive,
      description: def.description,
      chart: {
        chart,
        ...(def.chart.repo ? { repo: def.chart.repo } : {}),
        ...(def.chart.version ? { version: def.chart.version } : {}),
        ...(def.valuesFiles ? { valuesFiles: def.valuesFiles.map((f) => resolve(f)) } : {}),
        release: def.chart.release ?? def.name,
      },
      protocols: def.protocols,
      values: typeof values === 'function' ? values : () => values ?? {},
      objects: def.objects ?? (() => []),
      dataplanePort: def.dataplanePort ?? ((port) => port),
      graceSeconds: def.terminationGracePeriodSeconds,
      ...(def.drain ? { drain: def.drain } : {}),
      ...(def.dataplaneSelector ? { dataplaneSelector: def.dataplaneSelector } : {}),
      ...(def.controller ? { controller: def.controller } : {}),
      docs: def.docs ?? 'defined by the config file',
    };
  };
  const { naive, ...rest } = definition;
  const profile = markDefined(helmProfile(spec(rest, false)));
  if (!naive) return profile;
  const twin = { ...rest, ...naive, terminationGracePeriodSeconds: naive.terminationGracePeriodSeconds ?? rest.terminationGracePeriodSeconds };
  return Object.assign(profile, { naive: markDefined(helmProfile(spec(twin, true))) });
}
