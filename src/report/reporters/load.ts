// A user's reporter, loaded from the module a `--reporter` value or `reporters` entry names: its
// default export is the reporter, a class of one, or a function that returns one. Anything else is
// bad usage, refused before the run starts.

import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../../config/usage-error.ts';
import { REPORTER_EVENTS, type Reporter } from './reporter.ts';

const SHAPE = `a reporter: an object with any of ${REPORTER_EVENTS.join(', ')} (a class of one, or a function returning one), e.g. export default { onEnd(run) { ... } }`;

/** `field` names where the path came from (`--reporter`, or `reporters[1]` of a config), for the error. */
export async function loadReporter(path: string, field: string): Promise<Reporter> {
  if (!existsSync(path)) throw new UsageError(`${field} ${path}: no such file; give the path of a module whose default export is ${SHAPE}`);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw new UsageError(`${field} ${path}: the module does not load: ${(error as Error).message}`);
  }
  let reporter = module.default;
  if (typeof reporter === 'function') {
    const make = reporter as (new () => unknown) & (() => unknown);
    reporter = /^class\b/.test(Function.prototype.toString.call(make)) ? new make() : await make();
  }
  const problem = reporterProblem(reporter);
  if (problem) throw new UsageError(`${field} ${path}: its default export ${problem}; export ${SHAPE}`);
  return reporter as Reporter;
}

function reporterProblem(value: unknown): string | undefined {
  if (value === undefined) return 'is missing';
  if (typeof value !== 'object' || value === null) return `is ${value === null ? 'null' : typeof value}, not a reporter`;
  const events = REPORTER_EVENTS.filter((e) => e in value);
  if (events.length === 0) return 'has none of the events';
  const notFunctions = events.filter((e) => typeof (value as Record<string, unknown>)[e] !== 'function');
  return notFunctions.length > 0 ? `has ${notFunctions.join(', ')} that is not a function` : undefined;
}
