// --gateway-class, --dataplane-selector, --namespace-labels, --namespace-annotations and
// --gateway-timeout, and their config fields (gatewayClassName, dataplaneSelector, namespaceLabels,
// namespaceAnnotations, gatewayTimeouts), checked the same way from both. The pair lists take the
// conformance suite's syntax, comma-separated name=value (kubernetes-sigs/gateway-api
// conformance/utils/suite ParseKeyValuePairs), but a malformed pair is refused here where the suite
// drops it silently: a label that never reaches the namespace would leave a mesh unenrolled and the
// run would measure a system without it.

import { CONFORMANCE_TIMEOUTS, RUN_LABEL, type ClusterSystemSettings, type GatewayTimeoutName, type GatewayTimeouts } from '../providers/cluster-system.ts';
import { durationMs } from './checks.ts';
import { UsageError } from './usage-error.ts';
import type { FlagTable } from './flags.ts';

// Kubernetes "Labels and Selectors", Syntax and character set: an optional DNS-subdomain prefix and
// '/', then a name of at most 63 characters; a value of at most 63 characters, possibly empty.
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix))) return `key "${key}": the prefix before "/" must be a DNS subdomain (lowercase letters, digits, "-" and ".")`;
  if (!NAME.test(name)) return `key "${key}": the name must be 1-63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`;
  return undefined;
}

export function labelValueProblem(key: string, value: string): string | undefined {
  return value === '' || NAME.test(value) ? undefined : `label ${key}'s value "${value}": at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`;
}

/** An equality-based selector, KEY=VALUE[,KEY=VALUE]: what --dataplane-selector is applied as. */
export function labelSelectorProblem(selector: string): string | undefined {
  for (const term of selector.split(',')) {
    const match = /^([^=!]+)==?([^=]*)$/.exec(term.trim());
    if (!match) return `"${term}" is not KEY=VALUE; expected KEY=VALUE[,KEY=VALUE], for example app.kubernetes.io/name=envoy`;
    const problem = labelKeyProblem(match[1] ?? '') ?? labelValueProblem(match[1] ?? '', match[2] ?? '');
    if (problem) return problem;
  }
  return undefined;
}

/** A DNS subdomain: what Kubernetes allows as a GatewayClass's name. */
export function objectNameProblem(name: string): string | undefined {
  return name.length <= 253 && PREFIX.test(name) ? undefined : 'expected the name of a GatewayClass: lowercase letters, digits, "-" and ".", at most 253 characters';
}

/** Problems with a set of namespace labels or annotations (names the pair). */
export function pairsProblem(pairs: Record<string, string>, what: 'labels' | 'annotations'): string | undefined {
  for (const [key, value] of Object.entries(pairs)) {
    const problem = labelKeyProblem(key) ?? (what === 'labels' ? labelValueProblem(key, value) : undefined);
    if (problem) return problem;
    if (key === RUN_LABEL) return `${key} is the run's own label, by which teardown knows the namespace is the run's; choose another key`;
    if (value.includes(',')) return `${key}'s value contains ",", which separates pairs in --namespace-${what}`;
  }
  return undefined;
}

/** Parses name=value,name=value; throws UsageError naming the flag. */
export function parsePairs(flag: string, text: string, what: 'labels' | 'annotations'): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of text.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${flag} ${text}: "${item}" is not name=value; expected comma-separated name=value pairs, for example --${flag} ${what === 'labels' ? 'istio.io/dataplane-mode=ambient' : 'linkerd.io/inject=enabled'}`);
    pairs[item.slice(0, eq)] = item.slice(eq + 1);
  }
  const problem = pairsProblem(pairs, what);
  if (problem) throw new UsageError(`--${flag} ${text}: ${problem}`);
  return pairs;
}

export const GATEWAY_TIMEOUT_NAMES = Object.keys(CONFORMANCE_TIMEOUTS) as GatewayTimeoutName[];

export function parseGatewayTimeouts(values: readonly string[]): GatewayTimeouts {
  const timeouts: GatewayTimeouts = { ...CONFORMANCE_TIMEOUTS };
  for (const value of values) {
    const [name = '', duration = ''] = value.split('=');
    if (!(GATEWAY_TIMEOUT_NAMES as string[]).includes(name)) throw new UsageError(`--gateway-timeout ${value}: unknown wait "${name}"; use one of ${GATEWAY_TIMEOUT_NAMES.join(', ')}, e.g. --gateway-timeout gatewayMustHaveAddress=300s`);
    const ms = durationMs(duration);
    if (ms === undefined || ms === 0) throw new UsageError(`--gateway-timeout ${value}: expected a duration like 300s or 5m`);
    timeouts[name as GatewayTimeoutName] = ms;
  }
  return timeouts;
}

export interface ClusterSystemFlags {
  'gateway-class'?: string | undefined;
  'dataplane-selector'?: string | undefined;
  'namespace-labels'?: string | undefined;
  'namespace-annotations'?: string | undefined;
  'gateway-timeout'?: string[] | undefined;
}

/** The flags `zerodrop run` declares for these settings (util.parseArgs options, with their help). */
export const CLUSTER_SYSTEM_FLAGS = {
  'gateway-class': {
    type: 'string',
    value: 'NAME',
    help: 'netns, kind, k3s, cluster: a Gateway API implementation installed on the cluster, by its GatewayClass (netns installs traefik and traefik-naive itself); the run creates a Gateway and routes for it (docs/gateway-class.md)',
  },
  'dataplane-selector': {
    type: 'string',
    value: 'K=V[,K=V]',
    help: "with --gateway-class: selects the dataplane pods when neither the gateway-name label (GEP-1762) nor a known controller's labels find them",
  },
  'namespace-labels': {
    type: 'string',
    value: 'K=V[,K=V]',
    help: "kind, k3s, cluster: labels of the run's namespace, in the conformance suite's syntax (a mesh's enrolment, e.g. istio.io/dataplane-mode=ambient)",
  },
  'namespace-annotations': {
    type: 'string',
    value: 'K=V[,K=V]',
    help: "kind, k3s, cluster: annotations of the run's namespace, as --namespace-labels (e.g. linkerd.io/inject=enabled)",
  },
  'gateway-timeout': {
    type: 'string',
    multiple: true,
    value: 'NAME=DURATION',
    help: 'with --gateway-class, repeatable: the waits gatewayClassMustBeAccepted, gatewayMustHaveCondition, gatewayMustHaveAddress (default 180s each, as conformance)',
  },
} as const satisfies FlagTable;

/** The settings the flags make, or a UsageError naming the flag and the fix. */
export function clusterSystemSettings(provider: string, values: ClusterSystemFlags): ClusterSystemSettings {
  const given = (Object.keys(CLUSTER_SYSTEM_FLAGS) as (keyof ClusterSystemFlags)[]).filter((flag) => values[flag] !== undefined);
  if (provider === 'local' && given.length > 0) {
    const flag = given[0] ?? '';
    throw new UsageError(
      `--${flag}: needs a cluster (--provider netns, kind, k3s or cluster); the local provider runs pods as processes, with no ${flag === 'gateway-class' || flag === 'dataplane-selector' || flag === 'gateway-timeout' ? 'GatewayClass or Gateway API implementation' : 'namespaces'} to use`,
    );
  }
  const className = values['gateway-class'];
  if (className === undefined) {
    const orphan = given.find((flag) => flag === 'dataplane-selector' || flag === 'gateway-timeout');
    if (orphan) throw new UsageError(`--${orphan}: applies to --gateway-class; name the GatewayClass with --gateway-class NAME`);
  } else {
    const problem = objectNameProblem(className);
    if (problem) throw new UsageError(`--gateway-class ${className}: ${problem}`);
  }
  const selector = values['dataplane-selector'];
  const selectorProblem = selector === undefined ? undefined : labelSelectorProblem(selector);
  if (selectorProblem) throw new UsageError(`--dataplane-selector ${selector}: ${selectorProblem}`);
  const labels = values['namespace-labels'];
  const annotations = values['namespace-annotations'];
  return {
    ...(className !== undefined
      ? { gatewayClass: { name: className, ...(selector !== undefined ? { dataplaneSelector: selector } : {}), timeouts: parseGatewayTimeouts(values['gateway-timeout'] ?? []) } }
      : {}),
    ...(labels !== undefined ? { namespaceLabels: parsePairs('namespace-labels', labels, 'labels') } : {}),
    ...(annotations !== undefined ? { namespaceAnnotations: parsePairs('namespace-annotations', annotations, 'annotations') } : {}),
  };
}

/** The same settings in zerodrop.config.ts, named as the conformance suite's options file names them. */
export interface ClusterSystemConfig {
  /** netns, kind, k3s, cluster: the GatewayClass of an implementation installed on the cluster (`--gateway-class`). */
  gatewayClassName?: string;
  /** With gatewayClassName: the dataplane pods' label selector, KEY=VALUE[,KEY=VALUE] (`--dataplane-selector`). */
  dataplaneSelector?: string;
  /** Labels and annotations for the run's namespace (`--namespace-labels`, `--namespace-annotations`). */
  namespaceLabels?: Record<string, string>;
  namespaceAnnotations?: Record<string, string>;
  /** With gatewayClassName: the waits, as durations (`--gateway-timeout NAME=DURATION`; default 180s each). */
  gatewayTimeouts?: Partial<Record<GatewayTimeoutName, string>>;
}

/** The config's fields as flags, for configArgs: [flag, value] in order. */
export function clusterSystemArgs(config: ClusterSystemConfig): [string, string][] {
  const out: [string, string][] = [];
  const join = (p: Record<string, string>) => Object.entries(p).map(([k, v]) => `${k}=${v}`).join(',');
  if (config.gatewayClassName !== undefined) out.push(['gateway-class', config.gatewayClassName]);
  if (config.dataplaneSelector !== undefined) out.push(['dataplane-selector', config.dataplaneSelector]);
  if (config.namespaceLabels !== undefined) out.push(['namespace-labels', join(config.namespaceLabels)]);
  if (config.namespaceAnnotations !== undefined) out.push(['namespace-annotations', join(config.namespaceAnnotations)]);
  for (const [name, value] of Object.entries(config.gatewayTimeouts ?? {})) if (value !== undefined) out.push(['gateway-timeout', `${name}=${value}`]);
  return out;
}
