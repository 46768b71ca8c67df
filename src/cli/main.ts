#!/usr/bin/env node
// The `zerodrop` command. Exit codes (DESIGN.md): 0 every selected scenario passed or was skipped,
// 1 any failed or was inconclusive, 2 bad usage or configuration, 130 interrupted.

import { resolve } from 'node:path';
import { writeResults } from '../report/results.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import { parseRunArgs } from './args.ts';
import { listCatalog } from './list.ts';
import { printProgress, printResult, printSummary } from './progress.ts';
import { UsageError } from './usage-error.ts';

const HELP = `zerodrop: prove that gateways and backends drain without dropping a request

Usage:
  zerodrop run [--provider local] [--profile P]... [--scenario ID]... [--report-dir DIR]
               [--set option=value]... [--nightly]
  zerodrop list
  zerodrop help

run options:
  --provider    where pods run: local (default; real processes on loopback addresses)
  --profile     system under test, repeatable (default: reference); see \`zerodrop list\`
  --scenario    scenario id, repeatable (default: the whole catalog except controls)
  --report-dir  where results.json goes (default: reports)
  --set         override a scenario option, e.g. --set graceSeconds=30 (see \`zerodrop list\`)
  --nightly     realistic durations instead of the short defaults

Exit codes: 0 all passed or skipped, 1 a scenario failed or was inconclusive, 2 bad usage, 130 interrupted.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    console.log(HELP);
    return command === undefined ? 2 : 0;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  if (command === 'list') {
    listCatalog();
    return 0;
  }
  if (command !== 'run') throw new UsageError(`unknown command "${command}"; use run, list or help`);

  const args = parseRunArgs(rest);
  const controller = new AbortController();
  const interrupted = () => {
    if (controller.signal.aborted) return;
    console.error('\ninterrupted: stopping load and tearing down pods');
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);

  console.log(
    `zerodrop: ${args.scenarios.length} scenario(s) x ${args.profiles.length} profile(s) on provider ${args.provider}`,
  );
  try {
    const run = await runMatrix({
      provider: args.provider,
      scenarios: args.scenarios,
      profiles: args.profiles,
      overrides: args.overrides,
      nightly: args.nightly,
      signal: controller.signal,
      onProgress: (p) => printProgress(p),
      onResult: (r) => printResult(r),
    });
    const dir = resolve(args.reportDir);
    await writeResults(dir, run);
    printSummary(run.scenarios);
    console.log(`results: ${dir}/results.json`);
    return run.scenarios.every((s) => s.verdict === 'pass' || s.verdict === 'skipped') ? 0 : 1;
  } catch (error) {
    if (controller.signal.aborted) return 130;
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`zerodrop: ${error.message}`);
      process.exitCode = 2;
    } else {
      console.error('zerodrop: internal error:', error);
      process.exitCode = 3;
    }
  },
);
