// The flags of `zerodrop run`: what parseRunArgs parses (args.ts) and what `zerodrop help run`
// prints, one table. Apart from args.ts so that `--help` loads no catalog.

import { REPORTER_FILES, REPORTER_NAMES } from '../report/reporters/reporter.ts';
import { CLUSTER_SYSTEM_FLAGS } from './cluster-system-args.ts';
import type { FlagTable } from './flags.ts';
import { controlPlanePins } from '../providers/netns/control-plane-binary.ts';

/** The providers, as --provider's help names them. */
const PROVIDER_CHOICES =
  'local (default; real processes on loopback addresses), netns (a real Kubernetes cluster on this machine, nodes and pods as network namespaces; root, Go; see docs/netns-cluster.md), kind, k3s (Docker), or cluster (an existing cluster from a kubeconfig)';

/** What --kube-version means on each provider; run and campaign each add what several versions do. */
export const KUBE_VERSION_HELP = `kind, k3s: Kubernetes minor version of the nodes (default: 1.36 on kind, 1.35 on k3s); netns: a release kubernetes/ pins, or its minor (${controlPlanePins()
  .map((p, i) => (i === 0 ? `${p.version} (default)` : p.version))
  .join(', ')}; docs/netns-cluster.md)`;

/**
 * Where the pods run and where a provider's cluster comes from (parseProviderArgs in args.ts checks
 * them): `zerodrop campaign` takes these too, so that it holds the clusters `zerodrop run` does.
 */
export const PROVIDER_FLAGS = {
  provider: { type: 'string', default: 'local', value: 'NAME', help: `where pods run: ${PROVIDER_CHOICES}` },
  'kube-version': {
    type: 'string',
    multiple: true,
    value: 'V',
    help: `${KUBE_VERSION_HELP}; netns, repeatable or comma-separated: the selection runs on each version in turn, its reports in <report-dir>/<version>/, and compare.html and compare.md set them side by side in <report-dir>`,
  },
  'cluster-name': { type: 'string', value: 'NAME', help: 'kind: cluster to reuse, or create and delete afterwards (default zerodrop)' },
  nodes: { type: 'string', value: 'N', help: 'netns: number of nodes of the cluster (default 2; node-drain-http needs 2)' },
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'cluster: which cluster; the run only touches its own namespaces (and, with --gateway-class, the dataplane generated for its own Gateway)',
  },
  context: { type: 'string', value: 'NAME', help: "cluster: the kubeconfig's context (default: its current one)" },
} as const satisfies FlagTable;

/** `campaign --provider`: several at once, the same names. */
export const CAMPAIGN_PROVIDER_HELP = `where pods run, repeatable or comma-separated: each provider is opened once for the whole campaign and every run goes through the selection on each in turn, the table setting their counts side by side: ${PROVIDER_CHOICES}`;

export const RUN_FLAGS = {
  ...PROVIDER_FLAGS,
  ...CLUSTER_SYSTEM_FLAGS,
  profile: { type: 'string', multiple: true, value: 'P', help: 'system under test, repeatable (default: reference); see `zerodrop list`' },
  scenario: { type: 'string', multiple: true, value: 'ID', help: 'scenario id, repeatable (default: the whole catalog except controls)' },
  set: { type: 'string', multiple: true, value: 'option=value', help: 'override a scenario option, repeatable, e.g. --set graceSeconds=30 (see `zerodrop list`)' },
  nightly: { type: 'boolean', default: false, help: 'realistic durations instead of the short defaults' },
  workers: {
    type: 'string',
    default: '1',
    value: 'N',
    help: 'scenarios run at once, each on a provider of its own (default 1; timing-sensitive scenarios may turn inconclusive on a busy machine)',
  },
  driver: {
    type: 'string',
    default: 'builtin',
    value: 'NAME',
    help: 'which client sends the load: builtin (default), hey (paced HTTP loads) or iperf3 (UDP loads to iperf3 servers); a cross-check of the built-in generators, judged alike',
  },
  seed: {
    type: 'string',
    value: 'N',
    help: "local provider: the seed of the Service load balancers' per-node programming lags, as a failed or inconclusive result prints it: replays that run's lags (default: random)",
  },
  'report-dir': { type: 'string', value: 'DIR', help: 'where the reports go (default: reports)' },
  reporter: {
    type: 'string',
    multiple: true,
    value: 'NAME|PATH',
    help: [
      'which reporters hear the run, repeatable or comma-separated (default: the four built-in ones):',
      ...REPORTER_NAMES.map((n) => `${n.padEnd(12)} ${REPORTER_FILES[n].description}`),
      `${'./mine.ts'.padEnd(12)} a reporter module: its default export is the reporter, a class or a factory of one (docs/extending.md)`,
    ].join('\n'),
  },
  open: { type: 'boolean', default: false, help: "open index.html in the browser when the run ends ($BROWSER, else the system's opener)" },
  // Read before parsing (see config.ts); listed so that strict parsing accepts it.
  config: { type: 'string', value: 'FILE', help: 'settings file (default: ./zerodrop.config.ts if present); flags override it field by field' },
} as const satisfies FlagTable;
