// The report of a failing gateway-delete-http run answers, on its own: how many requests failed,
// when, on which gateway pod, in which phase, and how long after that pod's SIGTERM. The failing
// system is nginx as packaged (nginx-naive: plain SIGTERM, fast shutdown); skipped without nginx.

import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProfile } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import { writeReports } from '../../src/report/reporters/index.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { packageRoot } from '../../src/paths.ts';
import { runMatrix } from '../../src/runner/run-matrix.ts';
import { findScenario } from '../../src/scenarios/index.ts';
import { describeResult } from '../helpers/run-case.ts';
import { chromiumMissing, launchChromium } from './browser.ts';

const DIR = join(packageRoot, 'reports', 'report-suite-gateway');
const profile = findProfile('nginx-naive');
const scenario = findScenario('gateway-delete-http');
const skip =
  !profile || !scenario
    ? 'gateway-delete-http or nginx-naive is not in this build'
    : (missingRequirement(profile) ?? chromiumMissing);

describe.skipIf(skip !== undefined)(`the report of a failing gateway-delete-http run${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let result: ScenarioResult;
  let browser: Browser;

  beforeAll(async () => {
    const run = await runMatrix({ provider: 'local', scenarios: [scenario!], profiles: [profile!], overrides: {}, nightly: false, signal: AbortSignal.timeout(100_000) });
    result = run.scenarios[0]!;
    await writeReports(run, DIR);
    browser = await launchChromium();
  }, 110_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('says how many failed, when, on which gateway pod, in which phase, how long after SIGTERM', async () => {
    expect(result.verdict, describeResult(result)).toBe('fail');
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(`file://${join(DIR, 'index.html')}`);
    const section = page.locator('details.scenario[data-verdict="fail"]');
    const note = await section.locator('.fail-note').innerText();
    expect(note).toMatch(new RegExp(`^${result.counts.failed} of ${result.counts.requests} requests failed \\(.+\\), from t=\\d+\\.\\d{3} s to t=\\d+\\.\\d{3} s\\.$`));
    const deleted = result.timeline!.events.find((e) => e.kind === 'delete-issued')!.pod!;
    const group = await section.locator('table.groups tbody tr').first().locator('td').allInnerTexts();
    expect(group[0]).toBe(deleted); // the gateway pod
    expect(group[1]).toMatch(/^(terminating|terminating \(preStop\)|after SIGTERM|after exit|after SIGKILL)$/);
    expect(group[4]).toMatch(new RegExp(`^[+−]\\d+\\.\\d{3} s – [+−]\\d+\\.\\d{3} s of ${deleted}$`));
    const head = await section.locator('table.failures thead th').allInnerTexts();
    expect(head).toEqual(['#', 't', 'after SIGTERM', 'gateway pod', 'backend pod', 'outcome', 'phase', 'took', 'load · error']);
    const first = await section.locator('table.failures tbody tr').first().locator('td').allInnerTexts();
    expect(first[3]).toBe(deleted);
    expect(first[6]).toContain(`of ${deleted}`);
    await section.screenshot({ path: join(DIR, 'screenshot-gateway.png') });
    await page.close();
  });
});
