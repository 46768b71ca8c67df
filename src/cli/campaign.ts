#!/usr/bin/env node
// `npm run campaign -- --runs N`: runs the local catalog N times against every profile and counts,
// per scenario x profile, how often each verdict came out. A harness is only worth its verdicts: any
// scenario x profile whose verdict changes from one run to the next is flagged as a disagreement.
// Controls are included (they must fail every run); profiles whose binary is missing are skipped.

import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Verdict } from '../model/verdict.ts';
import { profiles as allProfiles } from '../profiles/index.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import { catalog } from '../scenarios/index.ts';
import { UsageError } from './usage-error.ts';

export interface CampaignRow {
  scenario: string;
  profile: string;
  counts: Record<Verdict, number>;
  /** True when not every run gave the same verdict. */
  disagreement: boolean;
}

export function tally(rows: Map<string, CampaignRow>, scenario: string, profile: string, verdict: Verdict): void {
  const key = `${scenario}\u0000${profile}`;
  let row = rows.get(key);
  if (!row) {
    row = { scenario, profile, counts: { pass: 0, fail: 0, inconclusive: 0, skipped: 0 }, disagreement: false };
    rows.set(key, row);
  }
  row.counts[verdict]++;
  row.disagreement = Object.values(row.counts).filter((n) => n > 0).length > 1;
}

export function formatCampaign(rows: readonly CampaignRow[], runs: number): string {
  const width = Math.max(...rows.map((r) => `${r.scenario} [${r.profile}]`.length), 10);
  const lines = [`${'scenario [profile]'.padEnd(width)}  pass  fail  inconc  skip`];
  for (const r of rows) {
    const c = r.counts;
    const cells = [c.pass, c.fail, c.inconclusive, c.skipped].map((n, i) => String(n).padStart(i === 2 ? 6 : 4));
    lines.push(`${`${r.scenario} [${r.profile}]`.padEnd(width)}  ${cells.join('  ')}${r.disagreement ? '  DISAGREEMENT' : ''}`);
  }
  const flagged = rows.filter((r) => r.disagreement).length;
  lines.push(`\n${runs} run(s), ${rows.length} scenario x profile pairs, ${flagged} with disagreement`);
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { runs: { type: 'string', default: '20' }, 'report-dir': { type: 'string', default: 'reports' } },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new UsageError(`--runs ${values.runs}: must be a whole number from 1 to 1000`);

  const controller = new AbortController();
  const stop = () => controller.abort(new Error('interrupted'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  const rows = new Map<string, CampaignRow>();
  const started = performance.now();
  for (let i = 1; i <= runs; i++) {
    const run = await runMatrix({
      provider: 'local',
      scenarios: catalog,
      profiles: allProfiles,
      overrides: {},
      nightly: false,
      signal: controller.signal,
      keepTimeline: false,
    });
    for (const s of run.scenarios) tally(rows, s.id, s.profile, s.verdict);
    const flagged = [...rows.values()].filter((r) => r.disagreement).length;
    console.log(`run ${i}/${runs} done in ${(run.durationMs / 1000).toFixed(0)} s; ${flagged} disagreement(s) so far`);
  }
  const table = [...rows.values()];
  console.log(`\n${formatCampaign(table, runs)}`);
  const dir = resolve(values['report-dir']);
  await mkdir(dir, { recursive: true });
  await writeFile(
    resolve(dir, 'campaign.json'),
    `${JSON.stringify({ runs, durationMs: Math.round(performance.now() - started), rows: table }, null, 2)}\n`,
  );
  return table.some((r) => r.disagreement) ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`campaign: ${error.message}`);
        process.exitCode = 2;
      } else if (error instanceof Error && error.message === 'interrupted') {
        process.exitCode = 130;
      } else {
        console.error('campaign: internal error:', error);
        process.exitCode = 3;
      }
    },
  );
}
