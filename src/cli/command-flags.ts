// The flags of campaign, clean, report and list: what each command parses and what its help prints,
// one table each (run's are src/config/run-flags.ts). Apart from the commands so that `--help`
// loads none of them.

import type { FlagTable } from '../config/flags.ts';
import { CAMPAIGN_PROVIDER_HELP, KUBE_VERSION_HELP, PROVIDER_FLAGS } from '../config/run-flags.ts';
import { CLUSTER_SYSTEM_FLAGS } from '../config/cluster-system-args.ts';

const CONFIG = { type: 'string', value: 'FILE' } as const;

export const CAMPAIGN_FLAGS = {
  runs: { type: 'string', default: '20', value: 'N', help: 'how many times (default 20)' },
  'report-dir': { type: 'string', default: 'reports', value: 'DIR', help: 'where campaign.json goes, rewritten after every run, and under runs/ the report of each run that was not the expected verdict (default: reports)' },
  scenario: { type: 'string', multiple: true, value: 'ID', help: "only this scenario, repeatable (default: the config's, else the whole catalog, controls included)" },
  profile: { type: 'string', multiple: true, value: 'NAME', help: "only this profile, repeatable (default: the config's, else every built-in, or with --gateway-class none but the class's; a missing binary is skipped)" },
  ablations: {
    type: 'boolean',
    default: false,
    help: 'also each drain setting taken out of the selected profiles (their drainSettings), on the scenarios that must catch it, expected to fail every run (docs/drain-settings.md)',
  },
  // Run's own provider flags, checked by the same parser (parseProviderArgs), so that a campaign
  // holds the clusters a run does; several providers, not several versions of one.
  ...PROVIDER_FLAGS,
  provider: { type: 'string', multiple: true, value: 'NAME', help: CAMPAIGN_PROVIDER_HELP },
  'kube-version': { ...PROVIDER_FLAGS['kube-version'], help: `${KUBE_VERSION_HELP}; one version, for the providers that take it` },
  kubeconfig: { ...PROVIDER_FLAGS.kubeconfig, help: 'cluster: which cluster; the campaign only touches its own namespaces' },
  // An installed implementation's class, taken as run takes it: its dataplane is one more profile.
  ...CLUSTER_SYSTEM_FLAGS,
  'gateway-class': {
    ...CLUSTER_SYSTEM_FLAGS['gateway-class'],
    help: `${CLUSTER_SYSTEM_FLAGS['gateway-class'].help}; its dataplane is one more profile (gatewayclass-NAME); every provider of the campaign must be a cluster`,
  },
  // Read before parsing (loadConfig); listed so that strict parsing accepts it.
  config: {
    ...CONFIG,
    help: 'settings file (default: ./zerodrop.config.ts if present): its profiles (its own defineProfile ones included), scenarios and set are the default selection',
  },
} as const satisfies FlagTable;

export const CLEAN_FLAGS = {
  'dry-run': { type: 'boolean', default: false, help: 'list what would be removed, remove nothing' },
  'local-only': { type: 'boolean', default: false, help: 'leave clusters alone (no namespaces looked for)' },
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'the cluster whose zerodrop namespaces to delete (default: $KUBECONFIG or ~/.kube/config, its current context; skipped when there is no kubeconfig)',
  },
  context: { type: 'string', value: 'NAME', help: "the kubeconfig's context to clean (default: its current one)" },
  'older-than': { type: 'string', value: 'DURATION', help: 'delete labelled namespaces older than this, e.g. 2h, 90m, 7d (default 24h; by creationTimestamp)' },
  all: { type: 'boolean', default: false, help: 'delete every labelled namespace except those of runs still going on this machine' },
} as const satisfies FlagTable;

export const REPORT_FLAGS = {
  reporter: { type: 'string', multiple: true, value: 'NAME|PATH', help: 'html, junit, conformance, or a reporter module (its onEnd hears the run); repeatable or comma-separated (default: the three files)' },
  open: { type: 'boolean', default: false, help: 'open index.html in the browser afterwards' },
  compare: {
    type: 'boolean',
    default: false,
    help: 'read several report directories (DIR...) and write them side by side, a column per run headed by its Kubernetes version, as compare.html and compare.md',
  },
  'report-dir': { type: 'string', value: 'DIR', help: 'with --compare: where compare.html and compare.md go (default: reports/compare)' },
} as const satisfies FlagTable;

export const LIST_FLAGS = {
  config: { ...CONFIG, help: 'settings file (default: ./zerodrop.config.ts if present): the profiles it defines are listed too' },
  scenario: { type: 'string', value: 'ID', help: 'one scenario in full: each option with its default, nightly value, range and meaning, the profiles that play it with the verdict each must have; with --manifests, its objects instead' },
  profile: { type: 'string', value: 'P', help: "with --manifests: the system under test in the scenario's role (default: reference)" },
  manifests: {
    type: 'boolean',
    default: false,
    help: "print what --scenario deploys on a cluster instead of the catalog: the Kubernetes objects the kube providers render for it with --profile and the scenario's default options, as YAML, in apply order (a charted profile's Helm release as a comment)",
  },
} as const satisfies FlagTable;
