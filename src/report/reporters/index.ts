// The built-in reporters, writing them into a report directory, and many reporters heard as one.

import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withRecordsFiles, type RunResult } from '../results.ts';
import { redact } from '../../observe/redact.ts';
import { conformanceReporter } from './conformance.ts';
import { htmlReporter } from './html.ts';
import { jsonReporter } from './json.ts';
import { junitReporter } from './junit.ts';
import { REPORTER_EVENTS, REPORTER_NAMES, type FileReporter, type Reporter, type ReporterName } from './reporter.ts';

export { REPORTER_NAMES, type FileReporter, type Reporter, type ReporterName } from './reporter.ts';

export const reporters: Readonly<Record<ReporterName, FileReporter>> = {
  json: jsonReporter,
  html: htmlReporter,
  junit: junitReporter,
  conformance: conformanceReporter,
};

/** The built-in reporter `name` as a run's reporter: on onEnd it writes its file into the report directory (none without one). */
export function fileReporter(name: ReporterName, written: Partial<Record<ReporterName, string>> = {}): Reporter {
  return {
    onEnd: async (run, { reportDir }) => {
      if (reportDir === undefined) return;
      written[name] = await writeReportFile(name === 'json' ? await withRecordsFiles(run, reportDir) : run, reportDir, reporters[name]);
    },
  };
}

/** Writes the chosen reports (all by default) into `dir`, each atomically; returns the paths by reporter. */
export async function writeReports(
  run: RunResult,
  dir: string,
  names: readonly ReporterName[] = REPORTER_NAMES,
): Promise<Partial<Record<ReporterName, string>>> {
  const written: Partial<Record<ReporterName, string>> = {};
  // results.json points at the records files: it is written first.
  const ordered = [...names].sort((a, b) => Number(b === 'json') - Number(a === 'json'));
  for (const name of ordered) await fileReporter(name, written).onEnd?.(run, { reportDir: dir });
  return written;
}

async function writeReportFile(run: RunResult, dir: string, reporter: FileReporter): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, reporter.file);
  // Write beside and rename, so a reader (a CI step, a browser) never sees half a file.
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, redact(reporter.render(run)), 'utf8');
  await rename(partial, path);
  return path;
}

/** Many reporters heard as one, each event to each in order; onBegin and onEnd wait for every one. */
export function allReporters(list: readonly Reporter[]): Required<Reporter> {
  const each = <E extends (typeof REPORTER_EVENTS)[number]>(event: E) => list.flatMap((r) => (r[event] ? [r[event].bind(r) as NonNullable<Reporter[E]>] : []));
  return {
    onBegin: async (run) => {
      for (const f of each('onBegin')) await f(run);
    },
    onPairBegin: (pair) => each('onPairBegin').forEach((f) => f(pair)),
    onProgress: (progress) => each('onProgress').forEach((f) => f(progress)),
    onPairEnd: (result) => each('onPairEnd').forEach((f) => f(result)),
    onEnd: async (run, context) => {
      for (const f of each('onEnd')) await f(run, context);
    },
  };
}
