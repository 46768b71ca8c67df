#!/usr/bin/env node
// The `zerodrop` command. Exit codes (DESIGN.md): 0 every selected scenario passed or was skipped,
// 1 any failed or was inconclusive, 2 bad usage or configuration, 130 interrupted.

import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { redact } from '../observe/redact.ts';
import { REPORTER_NAMES, writeReports, type ReporterName } from '../report/reporters/index.ts';
import { readResults, RESULTS_FILE } from '../report/results.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import { missingPrerequisites, openSession } from '../providers/index.ts';
import { parseRunArgs } from './args.ts';
import { listCatalog } from './list.ts';
import { configArgs, configFlag, loadConfig } from './config.ts';
import { HELP } from './help.ts';
import { openInBrowser } from './open.ts';
import { printSummary, ProgressView, summaryTable } from './progress.ts';
import { UsageError } from './usage-error.ts';
import { RunRecordFile } from '../state/run-record.ts';
import { parseFlags } from './flags.ts';

/** Set by the run's signal handlers; main's own exit code does not override it. */
let wasInterrupted = false;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const commands = ['run', 'list', 'report', 'clean'] as const;
  const isCommand = (c: string | undefined): c is (typeof commands)[number] => (commands as readonly string[]).includes(c ?? '');
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = rest[0];
    if (topic !== undefined && !isCommand(topic)) throw new UsageError(`help ${topic}: unknown command; use run, list, report or clean`);
    console.log(HELP[topic ?? 'main']);
    return command === undefined ? 2 : 0;
  }
  if (!isCommand(command)) throw new UsageError(`unknown command "${command}"; use run, list, report, clean or help`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP[command]);
    return 0;
  }
  if (command === 'list') {
    if (rest.length > 0) throw new UsageError(`list: unexpected argument "${rest[0]}"`);
    listCatalog();
    return 0;
  }
  if (command === 'report') return report(rest);
  // Loaded on demand: clean reaches clusters, whose client a run on the local provider never needs.
  if (command === 'clean') return (await import('./clean.ts')).clean(rest);

  // The config file first, then the flags over it, field by field; both validated before anything starts.
  const { config, file: configFile } = await loadConfig(configFlag(rest));
  const args = parseRunArgs([...configArgs(config, rest), ...rest]);
  // A cluster provider's prerequisites are checked before anything is created.
  const missing = await missingPrerequisites(args.providerSettings, (line) => console.error(`warning: ${line}`));
  if (missing.length > 0) {
    throw new UsageError(`--provider ${args.provider} cannot run here:\n  ${missing.join('\n  ')}`);
  }
  const controller = new AbortController();
  let beforeForcedExit = (): void => {};
  const interrupted = () => {
    // An interrupt is answered with 130 whenever it lands, even during the last teardown after the
    // verdicts were printed: whoever pressed Ctrl-C gets the exit status they asked for.
    wasInterrupted = true;
    process.exitCode = 130;
    // A second Ctrl-C does not wait for teardown: the providers' exit hooks SIGKILL every pod
    // and remove their directories synchronously as the process exits.
    if (controller.signal.aborted) {
      beforeForcedExit();
      process.exit(130);
    }
    console.error('\ninterrupted: stopping load and tearing down pods');
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  // A closed terminal: without a handler the default action would end the harness before teardown.
  process.on('SIGHUP', interrupted);

  console.log(
    `zerodrop: ${args.scenarios.length} scenario(s) x ${args.profiles.length} profile(s) on provider ${args.provider}${configFile ? ` (config ${configFile})` : ''}`,
  );
  using view = new ProgressView();
  view.expect(args.scenarios.length * args.profiles.length);
  // What this run starts is recorded until it has torn down, for `zerodrop clean` after a crash.
  using record = openRunRecord();
  // Locally the exit hooks remove everything the record lists; a cluster's namespaces and kind
  // clusters stay listed for `zerodrop clean`.
  if (args.provider === 'local') beforeForcedExit = () => record?.file.close();
  try {
    await using session = await openSession(args.providerSettings, (line) => view.line(redact(line)), record?.file);
    const run = await runMatrix({
      provider: args.provider,
      session,
      scenarios: args.scenarios,
      profiles: args.profiles,
      overrides: args.overrides,
      nightly: args.nightly,
      driver: args.driver,
      // The session carries the record to the providers; the load drivers get it here, since
      // they run on this machine whatever the provider (src/load/external/client-group.ts).
      ...(record ? { tracker: record.file } : {}),
      concurrency: args.workers,
      signal: controller.signal,
      onStart: (s) => view.started(s),
      onProgress: (p) => view.progress(p),
      onResult: (r) => view.result(r),
    });
    view.stop();
    if (config.implementation) run.implementation = config.implementation;
    const dir = resolve(args.reportDir);
    const written = await writeReports(run, dir, args.reporters);
    console.log('');
    for (const line of summaryTable(run.scenarios, process.stdout.columns || 120)) console.log(line);
    printSummary(run.scenarios);
    printWritten(written);
    if (args.open) await openReport(written.html);
    if (controller.signal.aborted) return 130;
    return run.scenarios.every((s) => s.verdict === 'pass' || s.verdict === 'skipped') ? 0 : 1;
  } catch (error) {
    if (controller.signal.aborted) return 130;
    throw error;
  }
}

/** The run's state record, deleted on dispose (after the session's teardown); none if the state directory is not writable. */
function openRunRecord(): (Disposable & { file: RunRecordFile }) | undefined {
  try {
    const file = RunRecordFile.create();
    return { file, [Symbol.dispose]: () => file.close() };
  } catch (error) {
    console.error(`zerodrop: no state record (${(error as Error).message}); \`zerodrop clean\` will not find this run's leftovers after a crash`);
    return undefined;
  }
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
  const problem = await openInBrowser(html);
  if (problem) console.error(`zerodrop: --open: ${problem}`);
}

/** `zerodrop report DIR`: re-renders the derived reports from DIR/results.json. */
async function report(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('report', argv, { reporter: { type: 'string', multiple: true }, open: { type: 'boolean', default: false } }, true);
  if (positionals.length !== 1) throw new UsageError('report: expects one directory, e.g. zerodrop report reports');
  const derived = REPORTER_NAMES.filter((n) => n !== 'json');
  const names = (values.reporter ?? derived).flatMap((r) => r.split(',')).map((name) => {
    if (!(derived as readonly string[]).includes(name)) throw new UsageError(`--reporter ${name}: use one or more of ${derived.join(', ')}`);
    return name as ReporterName;
  });
  const dir = resolve(positionals[0] as string);
  let run;
  try {
    run = await readResults(dir);
  } catch (error) {
    throw new UsageError(`${join(dir, RESULTS_FILE)}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (error as Error).message}`);
  }
  const written = await writeReports(run, dir, [...new Set(names)]);
  printWritten(written);
  if (values.open) await openReport(written.html);
  return 0;
}

main(process.argv.slice(2)).then(
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
);
