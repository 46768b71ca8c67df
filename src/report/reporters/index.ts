// The reporters and writing them into a report directory.

import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withRecordsFiles, type RunResult } from '../results.ts';
import { redact } from '../../observe/redact.ts';
import { conformanceReporter } from './conformance.ts';
import { htmlReporter } from './html.ts';
import { jsonReporter } from './json.ts';
import { junitReporter } from './junit.ts';
import { REPORTER_NAMES, type Reporter, type ReporterName } from './reporter.ts';

export { REPORTER_NAMES, type Reporter, type ReporterName } from './reporter.ts';

export const reporters: Readonly<Record<ReporterName, Reporter>> = {
  json: jsonReporter,
  html: htmlReporter,
  junit: junitReporter,
  conformance: conformanceReporter,
};

/** Writes the chosen reports (all by default) into `dir`, each atomically; returns the paths by reporter. */
export async function writeReports(
  run: RunResult,
  dir: string,
  names: readonly ReporterName[] = REPORTER_NAMES,
): Promise<Partial<Record<ReporterName, string>>> {
  await mkdir(dir, { recursive: true });
  // results.json points at the records files: they are written first.
  if (names.includes('json')) run = await withRecordsFiles(run, dir);
  const written: Partial<Record<ReporterName, string>> = {};
  for (const name of names) {
    const reporter = reporters[name];
    const path = join(dir, reporter.file);
    // Write beside and rename, so a reader (a CI step, a browser) never sees half a file.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, redact(reporter.render(run)), 'utf8');
    await rename(partial, path);
    written[name] = path;
  }
  return written;
}
