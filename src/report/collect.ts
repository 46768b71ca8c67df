// Collecting ScenarioResults produced in several processes (vitest runs test files in forks) into
// one RunResult: each process drops one file per result into a shared directory; the collector
// merges them at the end, in the order they finished.

import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TOOL_VERSION } from '../paths.ts';
import { reviveRecords, writeRecords, type RunResult, type ScenarioResult } from './results.ts';

const SUFFIX = '.result.json';

/** Writes one result into `dir` atomically (the merger never reads half a file). */
export async function dropResult(dir: string, result: ScenarioResult, provider = 'local'): Promise<void> {
  const name = `${Date.now().toString().padStart(15, '0')}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const partial = join(dir, `${name}.partial`);
  // The requests go into a records file beside it; the JSON holds the failed ones and the pointer.
  if (result.timeline) result = { ...result, records: await writeRecords(dir, name, result.timeline) };
  await writeFile(partial, JSON.stringify({ provider, result }), 'utf8');
  await rename(partial, join(dir, `${name}${SUFFIX}`));
}

/** The results dropped into `dir` as one run; undefined when there are none. */
export async function mergeResults(dir: string, run: { startedAt: Date; durationMs: number }): Promise<RunResult | undefined> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(SUFFIX)).sort();
  if (files.length === 0) return undefined;
  const scenarios: ScenarioResult[] = [];
  let provider = 'local';
  for (const file of files) {
    const data = JSON.parse(await readFile(join(dir, file), 'utf8')) as { provider: string; result: ScenarioResult };
    provider = data.provider;
    scenarios.push(await reviveRecords(dir, data.result));
  }
  return {
    tool: { name: 'zerodrop', version: TOOL_VERSION, node: process.version },
    provider,
    mode: 'default',
    startedAt: run.startedAt.toISOString(),
    durationMs: run.durationMs,
    scenarios,
  };
}
