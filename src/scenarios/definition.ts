// A scenario definition reads like a Gateway API conformance test: a ShortName (`id`), a Description,
// the Features it exercises, the seeds it comes from, its options (each declared once: a short default
// for `npm test`, a realistic `nightly` value, what it means), and a `build` that returns the Scenario
// the runner carries out.

import type { Scenario } from '../model/scenario.ts';
import type { Profile } from '../profiles/profile.ts';
import type { OptionValues, Toleration } from '../model/verdict.ts';

export type Feature = 'http' | 'http-keepalive' | 'http-no-keepalive' | 'backend' | 'rollout' | 'slow-lb' | 'idle' | 'tcp-stream' | 'websocket' | 'sse' | 'turn' | 'gateway' | 'udp' | 'endpoint-discovery' | 'http2' | 'scale' | 'node-drain' | 'control-plane' | 'grpc' | 'reload' | 'route-change';

/** Seed discussions (src/scenarios/seeds.ts), by their number. */
export type Seed = '000' | '001' | '002' | '003' | '004' | '005';

/**
 * One option of a scenario, declared where the scenario (or the factory it shares) uses it. Its range
 * belongs to its name, in option-kinds.ts: an option means the same thing in every scenario.
 */
export interface OptionSpec {
  /** Short, so that the whole local catalog runs in minutes. */
  default: number;
  /** Realistic, for nightly runs (`--nightly`); without one, nightly runs keep the default. */
  nightly?: number;
  /**
   * The default where the Service balancer picks a pod at random for each new connection (a
   * cluster: kube-proxy's nftables and iptables modes) instead of dealing them out in turn (the local
   * provider): a few connections then all miss the pod a scenario stops, 1 run in 16 with 4 of them
   * over 2 pods, and the run tests nothing (inconclusive). Enough that this is 1 in thousands.
   */
  cluster?: number;
  /** One line: what it means in this scenario. */
  doc: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** The values a scenario's `build` and `checkOptions` receive for its declared options. */
export type OptionsOf<S extends OptionSpecs> = { [K in keyof S]: number };

/** A misspelt field of a declaration (`nighlty`) would otherwise be dropped without a word. */
type OnlyOptionFields<S> = { [K in keyof S]: { [F in Exclude<keyof S[K], keyof OptionSpec>]: never } };

export interface ScenarioDefinition<O extends OptionValues = OptionValues> {
  id: string;
  description: string;
  features: Feature[];
  seeds: Seed[];
  /** Which part of the system the profile supplies: the backends, or the gateway in front of them. */
  role: 'backend' | 'gateway';
  /**
   * A control proves the harness can see a broken drain: it is expected to fail on every profile, so
   * it runs only when selected by id.
   */
  control?: boolean;
  /**
   * Broken profiles (mutants, naive twins) this scenario is not built to catch, each with why it
   * passes them. Every other broken profile must fail it: the flake campaign flags a verdict against
   * this expectation as UNEXPECTED (src/scenarios/expected.ts).
   */
  tolerates?: Record<string, Toleration>;
  /**
   * Drain-correct profiles this scenario fails, each with why: a behaviour of the system itself that
   * no setting of its configuration changes (nginx's reload closes idle keep-alive connections
   * unannounced), or a documented defect of a release it reproduces (with where it is documented; a
   * release that fixed it is a profile of its own). Their expected verdict here is `fail`; the
   * message names what they do.
   */
  knownFailures?: Record<string, string>;
  // The next three are derived from the scenario's declared `options` (defineScenario, OptionSpec).
  /** Short values, so that the whole local catalog runs in minutes. */
  defaults: O;
  /** Realistic values for nightly runs (`--nightly`). */
  nightly: Partial<O>;
  /** The defaults where the Service balancer picks pods at random (OptionSpec.cluster); absent: the same as everywhere. */
  cluster?: Partial<O>;
  /** One line per option. */
  optionDocs: { [K in keyof O]: string };
  /**
   * Constraints between options, for a scenario that has them (each option's own range is declared
   * once, in option-kinds.ts): what is wrong, or undefined. Checked before anything starts.
   */
  checkOptions?(options: O): string | undefined;
  build(profile: Profile, options: O): Scenario;
}

/** What a scenario file writes: its options declared once, the tables of ScenarioDefinition derived from them. */
export type ScenarioSpec<S extends OptionSpecs> = Omit<ScenarioDefinition<OptionsOf<S>>, 'defaults' | 'nightly' | 'cluster' | 'optionDocs'> & {
  options: S & OnlyOptionFields<S>;
};

/** The defaults, nightly and cluster values and docs of declared options, in their declared order (`zerodrop list`'s). */
export function optionTables<S extends OptionSpecs>(options: S): Pick<ScenarioDefinition<OptionsOf<S>>, 'defaults' | 'nightly' | 'cluster' | 'optionDocs'> {
  const specs = Object.entries(options);
  const cluster = specs.flatMap(([key, spec]) => (spec.cluster === undefined ? [] : [[key, spec.cluster]]));
  return {
    defaults: Object.fromEntries(specs.map(([key, spec]) => [key, spec.default])) as OptionsOf<S>,
    nightly: Object.fromEntries(specs.flatMap(([key, spec]) => (spec.nightly === undefined ? [] : [[key, spec.nightly]]))) as Partial<OptionsOf<S>>,
    ...(cluster.length > 0 ? { cluster: Object.fromEntries(cluster) as Partial<OptionsOf<S>> } : {}),
    optionDocs: Object.fromEntries(specs.map(([key, spec]) => [key, spec.doc])) as { [K in keyof S]: string },
  };
}

/**
 * Erases the option type so definitions with different options share one catalog array. A gateway
 * scenario's HTTP loads count only a 2xx as answered (HttpLoadSpec.okStatus): its backends are the
 * reference app, which answers each of them with one, so a 404 or 421 is the gateway's own answer,
 * a request dropped in front of every backend. Decided here, once, so that no gateway scenario
 * (nor a new one) lets a gateway pass by answering for itself.
 */
export function defineScenario<S extends OptionSpecs>(spec: ScenarioSpec<S>): ScenarioDefinition {
  const { options, ...rest } = spec;
  const erased = { ...rest, ...optionTables<S>(options) } as unknown as ScenarioDefinition;
  if (erased.role !== 'gateway') return erased;
  return { ...erased, build: (profile, o) => answeredByBackends(erased.build(profile, o)) };
}

/** The same declarations with nightly runs keeping their defaults: for a scenario that has no nightly form. */
export function withoutNightly<S extends OptionSpecs>(options: S): S {
  return Object.fromEntries(Object.entries(options).map(([key, spec]) => [key, { default: spec.default, ...(spec.cluster !== undefined ? { cluster: spec.cluster } : {}), doc: spec.doc }])) as S;
}

/** Some of a shared group of option declarations, in the order given (`zerodrop list` shows options in declared order). */
export function pick<T extends object, const K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;
}

/** The scenario with every HTTP load (HTTP/1.1, single requests, HTTP/2) counting only a 2xx as answered. */
export function answeredByBackends(scenario: Scenario): Scenario {
  const loads = scenario.loads.map((l) => (l.spec.kind === 'http' || l.spec.kind === 'single' || l.spec.kind === 'lagging-node' || l.spec.kind === 'http2' ? { ...l, spec: { ...l.spec, okStatus: '2xx' as const } } : l));
  return { ...scenario, loads };
}
