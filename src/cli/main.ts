#!/usr/bin/env node
// The `zerodrop` command. Exit codes: 0 every selected scenario passed or was skipped, 1 any failed or
// was inconclusive, 2 bad usage or configuration, 3 internal error (a bug), 130 interrupted.

import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { redact } from '../observe/redact.ts';
import { REPORTER_NAMES, type ReporterName } from '../report/reporters/reporter.ts';
import type { RunResult } from '../report/results.ts';
import { HELP } from './help.ts';
import { LIST_FLAGS, REPORT_FLAGS } from './command-flags.ts';
import { UsageError } from '../config/usage-error.ts';
import { endProcess } from '../end-process.ts';
import { reportDirProblem } from '../config/checks.ts';

// Each command loads what it needs when it runs (`await import`), so `--help` and `list` answer
// at once and a local run never loads the cluster client.

/** Set by the run's signal handlers; main's own exit code does not override it. */
let wasInterrupted = false;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const commands = ['run', 'list', 'report', 'clean', 'campaign'] as const;
  const isCommand = (c: string | undefined): c is (typeof commands)[number] => (commands as readonly string[]).includes(c ?? '');
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = rest[0];
    if (topic !== undefined && !isCommand(topic)) throw new UsageError(`help ${topic}: unknown command; use run, list, campaign, report or clean`);
    console.log(HELP[topic ?? 'main']);
    return command === undefined ? 2 : 0;
  }
  if (!isCommand(command)) throw new UsageError(`unknown command "${command}"; use run, list, campaign, report, clean or help`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP[command]);
    return 0;
  }
  if (command === 'list') return list(rest);
  if (command === 'report') return report(rest);
  // Loaded on demand: clean reaches clusters, whose client a run on the local provider never needs.
  if (command === 'clean') {
    const { clean } = await import('./clean.ts');
    return clean(rest);
  }
  if (command === 'campaign') {
    const { campaign } = await import('./campaign.ts');
    return campaign(rest);
  }

  return runCommand(rest);
}

/** `zerodrop list`: the catalog, with the profiles the config file defines; or what a scenario deploys (--manifests). */
async function list(rest: string[]): Promise<number> {
  const [{ listCatalog, describeScenario }, { loadConfig, definedProfiles }, { parseFlags }, { scenariosNamed }] = await Promise.all([
    import('./list.ts'),
    import('../config/config.ts'),
    import('../config/flags.ts'),
    import('../config/args.ts'),
  ]);
  const { values } = parseFlags('list', rest, LIST_FLAGS);
  if (!values.manifests && values.profile !== undefined) {
    throw new UsageError('list: --profile goes with --scenario ID --manifests, e.g. zerodrop list --scenario gateway-delete-http --profile nginx --manifests');
  }
  if (values.manifests && values.scenario === undefined) throw new UsageError('list: --manifests needs --scenario ID, e.g. zerodrop list --scenario backend-delete-http --manifests');
  const { config } = await loadConfig(values.config);
  if (values.manifests && values.scenario !== undefined) {
    const { printManifests } = await import('./manifests.ts');
    await printManifests(values.scenario, values.profile ?? 'reference', definedProfiles(config), console.log);
    return 0;
  }
  if (values.scenario !== undefined) {
    const [def] = scenariosNamed([values.scenario]);
    describeScenario(def!, console.log, definedProfiles(config));
    return 0;
  }
  listCatalog(console.log, definedProfiles(config));
  return 0;
}

/** `zerodrop run`: the config file, the flags over it field by field, then the API's run with a progress view. */
async function runCommand(rest: string[]): Promise<number> {
  const [{ planRun, runPlan, runVersionsPlan }, { loadConfig, configFlag }, { ProgressView, printSummary, summaryTable }] = await loadRunModules();
  const { config, file: configFile } = await loadConfig(configFlag(rest));
  const plan = planRun(config, { argv: rest, ...(configFile ? { source: configFile } : {}) });
  // The command always writes its reports; the API only when asked.
  plan.reportDir ??= 'reports';
  const controller = new AbortController();
  const interrupted = () => {
    // An interrupt is answered with 130 whenever it lands, even during the last teardown after the
    // verdicts were printed: whoever pressed Ctrl-C gets the exit status they asked for.
    wasInterrupted = true;
    process.exitCode = 130;
    // A second Ctrl-C does not wait for teardown: the providers' exit hooks SIGKILL every pod
    // and remove their directories synchronously as the process exits.
    if (controller.signal.aborted) process.exit(130);
    console.error('\ninterrupted: stopping load and tearing down pods');
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  // A closed terminal: without a handler the default action would end the harness before teardown.
  process.on('SIGHUP', interrupted);

  using view = new ProgressView();
  let written: Partial<Record<ReporterName, string>> = {};
  const callbacks = {
    signal: controller.signal,
    log: (line: string) => view.line(redact(line)),
    // Announced once the prerequisites are met: a run refused for them started nothing.
    onOpening: () =>
      view.line(`zerodrop: ${plan.scenarios.length} scenario(s) x ${plan.profiles.length} profile(s) on provider ${plan.provider}${configFile ? ` (config ${configFile})` : ''}`),
    reporter: view,
    onReports: (w: Partial<Record<ReporterName, string>>) => (written = w),
  };
  const summary = (scenarios: RunResult['scenarios']) => {
    console.log('');
    for (const line of summaryTable(scenarios, process.stdout.columns || 120)) console.log(line);
    printSummary(scenarios);
    printWritten(written);
  };
  const passed = (scenarios: RunResult['scenarios']) => scenarios.every((s) => s.verdict === 'pass' || s.verdict === 'skipped');
  try {
    if (plan.kubeVersions.length > 1) {
      // Several versions: the API runs each in turn and compares them; each version's summary as it ends.
      const { versions, comparison } = await runVersionsPlan(
        plan,
        {
          ...callbacks,
          onVersionBegin: (version, i, total) => view.line(`${i > 0 ? '\n' : ''}zerodrop: Kubernetes ${version} (${i + 1} of ${total})`),
          onVersionEnd: ({ kubeVersion, result }) => {
            view.stop();
            console.log(`\nKubernetes ${kubeVersion}${result.kubernetesVersion && result.kubernetesVersion !== kubeVersion ? ` (API server: ${result.kubernetesVersion})` : ''}:`);
            summary(result.scenarios);
          },
        },
        config.implementation,
      );
      if (comparison) console.log(`\ncompared ${versions.length} versions: ${comparison.html}, ${comparison.markdown}`);
      if (plan.open) await openReport(comparison?.html);
      if (controller.signal.aborted) return 130;
      return versions.every((v) => passed(v.result.scenarios)) ? 0 : 1;
    }
    const run = await runPlan(plan, callbacks, config.implementation);
    view.stop();
    summary(run.scenarios);
    if (plan.open) await openReport(written.html);
    if (controller.signal.aborted) return 130;
    return passed(run.scenarios) ? 0 : 1;
  } catch (error) {
    if (controller.signal.aborted) return 130;
    throw error;
  }
}

// Apart from runCommand: tsc leaves `.ts` specifiers unrewritten in a function it downlevels for
// `using` (scripts/build.ts checks the build for any that remain).
function loadRunModules() {
  return Promise.all([import('../api/run.ts'), import('../config/config.ts'), import('./progress.ts')]);
}

function printWritten(written: Partial<Record<ReporterName, string>>): void {
  const label: Record<ReporterName, string> = { json: 'results', html: 'report', junit: 'junit', conformance: 'conformance' };
  for (const name of REPORTER_NAMES) {
    const path = written[name];
    if (path !== undefined) console.log(`${`${label[name]}:`.padEnd(13)}${path}`);
  }
}

async function openReport(html: string | undefined): Promise<void> {
  if (html === undefined) {
    console.error('zerodrop: --open: no HTML report was written (add --reporter html)');
    return;
  }
  const { openInBrowser } = await import('./open.ts');
  const problem = await openInBrowser(html);
  if (problem) console.error(`zerodrop: --open: ${problem}`);
}

/** `zerodrop report DIR`: re-renders the derived reports from DIR/results.json. */
async function report(argv: string[]): Promise<number> {
  const [{ parseFlags }, { writeReports }, { readResults, RESULTS_FILE }, { loadReporter }, { isReporterPath }] = await Promise.all([
    import('../config/flags.ts'),
    import('../report/reporters/index.ts'),
    import('../report/results.ts'),
    import('../report/reporters/load.ts'),
    import('../report/reporters/reporter.ts'),
  ]);
  const { values, positionals } = parseFlags('report', argv, REPORT_FLAGS, true);
  if (values.compare) return compareRuns(positionals, values['report-dir'] ?? join('reports', 'compare'), values.open);
  if (values['report-dir'] !== undefined) throw new UsageError('--report-dir: only with --compare (without it the reports are rebuilt in DIR)');
  if (positionals.length !== 1) throw new UsageError('report: expects one directory, e.g. zerodrop report reports');
  const derived = REPORTER_NAMES.filter((n) => n !== 'json');
  const given = (values.reporter ?? derived).flatMap((r) => r.split(','));
  const names = given.filter((name) => !isReporterPath(name)).map((name) => {
    if (!(derived as readonly string[]).includes(name)) throw new UsageError(`--reporter ${name}: use one or more of ${derived.join(', ')}, or the path of a reporter module`);
    return name as ReporterName;
  });
  // Loaded before results.json is read: a module that is missing or exports no reporter writes nothing.
  const modules = await Promise.all(given.filter(isReporterPath).map((path) => loadReporter(resolve(path), '--reporter')));
  const dir = resolve(positionals[0] as string);
  let run;
  try {
    run = await readResults(dir);
  } catch (error) {
    throw new UsageError(`${join(dir, RESULTS_FILE)}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (error as Error).message}`);
  }
  const written = await writeReports(run, dir, [...new Set(names)]);
  for (const module of modules) await module.onEnd?.(run, { reportDir: dir });
  printWritten(written);
  if (values.open) await openReport(written.html);
  return 0;
}

/** `zerodrop report --compare DIR DIR...`: the runs side by side (src/report/compare.ts). */
async function compareRuns(dirs: string[], out: string, open: boolean): Promise<number> {
  if (dirs.length < 2) throw new UsageError('report --compare: expects two or more report directories, e.g. zerodrop report --compare reports/v1.36.3 reports/v1.37.2');
  const problem = reportDirProblem(out);
  if (problem !== undefined) throw new UsageError(`--report-dir ${JSON.stringify(out)}: ${problem}`);
  const { readRuns, writeComparison } = await import('../report/compare.ts');
  let runs;
  try {
    runs = await readRuns(dirs);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const written = await writeComparison(runs, resolve(out));
  console.log(`compared ${runs.length} runs: ${written.html}, ${written.markdown}`);
  if (open) await openReport(written.html);
  return 0;
}

void main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = wasInterrupted ? 130 : code;
    },
    (error: unknown) => {
      // An error may quote what a server sent back, credentials included: redact before printing.
      if (error instanceof UsageError) {
        console.error(redact(`zerodrop: ${error.message}`));
        process.exitCode = 2;
      } else {
        console.error(redact(`zerodrop: internal error: ${inspect(error)}`));
        process.exitCode = 3;
      }
    },
  )
  // Every teardown was awaited: end once the output is out (end-process.ts says why not later).
  .then(endProcess);
