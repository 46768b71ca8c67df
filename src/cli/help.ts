// `zerodrop --help` and `zerodrop <command> --help`.

import { REPORTER_FILES, REPORTER_NAMES } from '../report/reporters/reporter.ts';

const EXIT_CODES = 'Exit codes: 0 all passed or skipped, 1 a scenario failed or was inconclusive, 2 bad usage or configuration, 3 internal error (a bug of zerodrop: please report it with the output), 130 interrupted.';

export const HELP: Record<'main' | 'run' | 'list' | 'report' | 'clean' | 'campaign', string> = {
  main: `zerodrop: prove that gateways and backends drain without dropping a request

Usage:
  zerodrop run [options]     run scenarios against profiles, write the reports
  zerodrop list              the scenario catalog (descriptions, options, seeds) and the profiles
  zerodrop campaign [options] the selection run again and again, every verdict counted; --ablations
                             proves each drain setting of the selected profiles necessary
  zerodrop report DIR        rebuild index.html (and junit.xml, conformance.yaml) from DIR/results.json and DIR/records/
  zerodrop clean [--dry-run] remove what crashed runs left behind (processes, temp dirs, namespaces, kind clusters)
  zerodrop help [COMMAND]    this text, or a command's (also: zerodrop COMMAND --help)

${EXIT_CODES}`,

  run: `zerodrop run: run the selected scenarios against the selected profiles and write the reports

Usage:
  zerodrop run [--config FILE] [--provider local|netns|kind|k3s|cluster] [--profile P]... [--scenario ID]...
               [--set option=value]... [--nightly] [--report-dir DIR] [--reporter NAME]... [--open]

Options:
  --config      settings file (default: ./zerodrop.config.ts if present); flags override it field by field
  --provider    where pods run: local (default; real processes on loopback addresses), netns (a real
                Kubernetes cluster on this machine, nodes and pods as network namespaces; root, Go; see
                docs/netns-cluster.md), kind, k3s (Docker), or cluster (an existing cluster from a kubeconfig)
  --kube-version  kind, k3s: Kubernetes minor version of the nodes (default: 1.36 on kind, 1.35 on k3s)
  --cluster-name  kind: cluster to reuse, or create and delete afterwards (default zerodrop)
  --nodes       netns: number of nodes of the cluster (default 2; node-drain-http needs 2)
  --kubeconfig, --context  cluster: which cluster; the run only touches its own namespaces (and, with
                --gateway-class, the dataplane generated for its own Gateway)
  --gateway-class  kind, k3s, cluster: a Gateway API implementation installed on the cluster, by its
                GatewayClass; the run creates a Gateway and routes for it (docs/gateway-class.md)
  --dataplane-selector  with --gateway-class: KEY=VALUE[,KEY=VALUE] selecting the dataplane pods when
                neither the gateway-name label (GEP-1762) nor a known controller's labels find them
  --gateway-timeout  with --gateway-class: NAME=DURATION, repeatable; the waits gatewayClassMustBeAccepted,
                gatewayMustHaveCondition, gatewayMustHaveAddress (default 180s each, as conformance)
  --namespace-labels, --namespace-annotations  name=value[,name=value] for the run's namespace, in the
                conformance suite's syntax (a mesh's enrolment, e.g. linkerd.io/inject=enabled)
  --profile     system under test, repeatable (default: reference); see \`zerodrop list\`
  --scenario    scenario id, repeatable (default: the whole catalog except controls)
  --set         override a scenario option, e.g. --set graceSeconds=30 (see \`zerodrop list\`)
  --nightly     realistic durations instead of the short defaults
  --workers     scenarios run at once, each on a provider of its own (default 1; timing-sensitive
                scenarios may turn inconclusive on a busy machine)
  --driver      which client sends the load: builtin (default), hey (paced HTTP loads) or iperf3
                (UDP loads to iperf3 servers); a cross-check of the built-in generators, judged alike
  --seed        local provider: the seed of the Service load balancers' per-node programming lags,
                as a failed or inconclusive result prints it: replays that run's lags (default: random)
  --report-dir  where the reports go (default: reports)
  --reporter    which reports to write, repeatable or comma-separated (default: all):
${REPORTER_NAMES.map((n) => `                  ${n.padEnd(12)} ${REPORTER_FILES[n].description}`).join('\n')}
  --open        open index.html in the browser when the run ends ($BROWSER, else the system's opener)

Progress: on a terminal one status line is redrawn in place; with CI set or output redirected,
plain lines are printed instead.

Config file (zerodrop.config.ts):
  import { defineConfig } from 'zerodrop';
  export default defineConfig({ profiles: ['reference'], scenarios: ['backend-delete-http'],
    set: { graceSeconds: 30 }, reportDir: 'reports', implementation: { organization: 'acme', project: 'edge' } });

${EXIT_CODES}`,

  list: `zerodrop list: the scenario catalog and the profiles

Usage:
  zerodrop list [--config FILE]

For each scenario: its id, description, options with their defaults (override with --set) and the
seed discussions it comes from; then every profile with its kind and what it demonstrates, the
built-in ones and those the config file (default ./zerodrop.config.ts) defines with defineProfile;
then the ablations (a drain-correct profile without one of its drainSettings), the built-ins' and the
config's, each with the scenarios that must fail it. Run one with zerodrop run --profile NAME.`,

  campaign: `zerodrop campaign: the selection run again and again on the local provider, every verdict counted

Usage:
  zerodrop campaign [--config FILE] [--runs N] [--scenario ID]... [--profile NAME]... [--ablations] [--report-dir DIR]

Options:
  --config          settings file (default: ./zerodrop.config.ts if present): its profiles (its own
                    defineProfile ones included), scenarios and set are the default selection
  --runs N          how many times (default 20)
  --scenario ID     only this scenario, repeatable (default: the config's, else the whole catalog, controls included)
  --profile NAME    only this profile, repeatable (default: the config's, else every built-in; a missing binary is skipped)
  --ablations       also each drain setting taken out of the selected profiles (their drainSettings), on
                    the scenarios that must catch it, expected to fail every run (docs/drain-settings.md)
  --report-dir DIR  where campaign.json goes, rewritten after every run (default: reports)

Exit codes: 0 every pair gave the same verdict every run and each judged verdict was the expected one
(a drain-correct profile passing, a naive twin, mutant or ablation failing), 1 otherwise, 2 bad usage
or configuration, 3 internal error, 130 interrupted. More: docs/campaign.md`,

  report: `zerodrop report: rebuild the reports of a finished run from its results.json

Usage:
  zerodrop report DIR [--reporter NAME]... [--open]

Reads DIR/results.json and the records files it points to (DIR/records/), and writes DIR/index.html,
DIR/junit.xml and DIR/conformance.yaml again (or only the --reporter ones), e.g. after upgrading
zerodrop or from a CI artifact.

Options:
  --reporter    html, junit or conformance; repeatable or comma-separated (default: all three)
  --open        open index.html in the browser afterwards

Exit codes: 0 written, 2 DIR has no readable results.json (or records file) or bad usage.`,

  clean: `zerodrop clean: remove what runs that crashed (were killed, lost power) left behind

Usage:
  zerodrop clean [--dry-run] [--local-only] [--kubeconfig FILE] [--context NAME] [--older-than DURATION | --all]

A run that ends by itself, Ctrl-C included, tears everything down. One that was killed leaves its
state record in $ZERODROP_STATE_DIR, else $XDG_STATE_HOME/zerodrop, else ~/.local/state/zerodrop
(runs/<id>.json). For each record whose zerodrop process is gone (runs still going are skipped),
clean kills the process groups the run started (pods, and the hey or iperf3 of --driver; checking
each process's start time, so that a reused pid is never killed), removes its zerodrop-* temporary
directories and the kind clusters it created (only if their nodes carry
zerodrop.dev/created-by=zerodrop and no run still going here uses them), then the record. On the kubeconfig's current (or --context) cluster it deletes
namespaces labelled zerodrop.dev/run, and no other, when (a) a run recorded on this machine made it
and its zerodrop is gone, (b) it is older than --older-than (default 24h; another machine's run may
be using a younger one), or (c) --all is given; never one of a run still going on this machine.
Before a namespace goes, the Helm releases in it are uninstalled (helm must be on PATH: their
cluster-wide objects would stay otherwise, so without it the namespace is kept) and the run's own
cluster-scoped objects (GatewayClass, Dataplane) labelled zerodrop.dev/run are deleted.
Each thing removed is printed with the rule that allowed it.

Options:
  --dry-run     list what would be removed, remove nothing
  --local-only  leave clusters alone (no namespaces looked for)
  --older-than  delete labelled namespaces older than this, e.g. 2h, 90m, 7d (default 24h; by creationTimestamp)
  --all         delete every labelled namespace except those of runs still going on this machine
  --kubeconfig, --context  the cluster whose zerodrop namespaces to delete (default: $KUBECONFIG or
                ~/.kube/config, its current context; skipped when there is no kubeconfig)

Exit codes: 0 done, 1 something could not be removed (it is kept for the next clean), 2 bad usage.`,
};
