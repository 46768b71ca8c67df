// `zerodrop --help` and `zerodrop <command> --help`. Each command's Options are printed from the
// table its parser uses (flagHelp), so the help lists exactly the flags the command takes.

import { flagHelp, type FlagTable } from '../config/flags.ts';
import { RUN_FLAGS } from '../config/run-flags.ts';
import { CAMPAIGN_FLAGS, CLEAN_FLAGS, LIST_FLAGS, REPORT_FLAGS } from './command-flags.ts';

const EXIT_CODES = 'Exit codes: 0 all passed or skipped, 1 a scenario failed or was inconclusive, 2 bad usage or configuration, 3 internal error (a bug of zerodrop: please report it with the output), 130 interrupted.';

/** Each command's flags, as it parses them; main has none of its own. */
export const FLAGS: Record<'run' | 'list' | 'report' | 'clean' | 'campaign', FlagTable> = {
  run: RUN_FLAGS,
  list: LIST_FLAGS,
  report: REPORT_FLAGS,
  clean: CLEAN_FLAGS,
  campaign: CAMPAIGN_FLAGS,
};

export const HELP: Record<'main' | 'run' | 'list' | 'report' | 'clean' | 'campaign', string> = {
  main: `zerodrop: prove that gateways and backends drain without dropping a request

Usage:
  zerodrop run [options]     run scenarios against profiles, write the reports
  zerodrop list              the scenario catalog (descriptions, options, seeds) and the profiles
                             (--scenario ID --manifests: what a scenario deploys on a cluster)
  zerodrop campaign [options] the selection run again and again, every verdict counted; --ablations
                             proves each drain setting of the selected profiles necessary
  zerodrop report DIR        rebuild index.html (and junit.xml, conformance.yaml) from DIR/results.json and DIR/records/
  zerodrop report --compare DIR DIR...   runs side by side, a column per Kubernetes version
  zerodrop clean [--dry-run] remove what crashed runs left behind (processes, temp dirs, namespaces, kind clusters)
  zerodrop help [COMMAND]    this text, or a command's (also: zerodrop COMMAND --help)

${EXIT_CODES}`,

  run: `zerodrop run: run the selected scenarios against the selected profiles and write the reports

Usage:
  zerodrop run [--config FILE] [--provider local|netns|kind|k3s|cluster] [--profile P]... [--scenario ID]...
               [--set option=value]... [--nightly] [--report-dir DIR] [--reporter NAME]... [--open]

Options:
${flagHelp(RUN_FLAGS)}

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
  zerodrop list --scenario ID
  zerodrop list --scenario ID [--profile P] --manifests

Options:
${flagHelp(LIST_FLAGS)}

For each scenario: its id, description, options with their defaults (override with --set) and the
seed discussions it comes from; then every profile with its kind and what it demonstrates, the
built-in ones and those the config file (default ./zerodrop.config.ts) defines with defineProfile;
then the ablations (a drain-correct profile without one of its drainSettings), the built-ins' and the
config's, each with the scenarios that must fail it. Run one with zerodrop run --profile NAME.`,

  campaign: `zerodrop campaign: the selection run again and again, every verdict counted

Usage:
  zerodrop campaign [--config FILE] [--runs N] [--scenario ID]... [--profile NAME]... [--ablations] [--report-dir DIR]
                    [--provider local|netns|kind|k3s|cluster]... [--kube-version V] [--nodes N]

Options:
${flagHelp(CAMPAIGN_FLAGS)}

Exit codes: 0 every pair gave the same verdict every run and each judged verdict was the expected one
(a drain-correct profile passing, a naive twin, mutant or ablation failing) and no provider passed a
pair another failed, 1 otherwise, 2 bad usage or configuration, 3 internal error, 130 interrupted.
More: docs/campaign.md`,

  report: `zerodrop report: rebuild the reports of a finished run from its results.json

Usage:
  zerodrop report DIR [--reporter NAME]... [--open]
  zerodrop report --compare DIR DIR... [--report-dir OUT] [--open]

Reads DIR/results.json and the records files it points to (DIR/records/), and writes DIR/index.html,
DIR/junit.xml and DIR/conformance.yaml again (or only the --reporter ones), e.g. after upgrading
zerodrop or from a CI artifact.

With --compare, reads the results.json of each DIR (a run per Kubernetes version, say) and writes
OUT/compare.html and OUT/compare.md: a row per scenario x profile, a column per run headed by the
Kubernetes version its API server reported, the rows whose verdicts differ marked.

Options:
${flagHelp(REPORT_FLAGS)}

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
${flagHelp(CLEAN_FLAGS)}

Exit codes: 0 done, 1 something could not be removed (it is kept for the next clean), 2 bad usage.`,
};
