// `npm run bench` interrupted leaves nothing behind either: Ctrl-C or SIGTERM while a tool loads its
// target stops the tool, the benchmark's servers (nginx, the UDP echo), its pods and the `zerodrop
// run`s of the provider section, removes their directories, and exits 130 without writing a report;
// a second Ctrl-C right after the first exits at once and its exit hook still kills the servers and
// removes their directories. Moments are random but seeded,
// within the stretch where the section's servers and loads run; replay with ZERODROP_INTERRUPT_SEED.

import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath } from '../src/profiles/requirements.ts';
import { leftBehind, seededRandom, startMarked, within, type MarkedProcess } from './helpers/marked-process.ts';

const SEED = Number(process.env['ZERODROP_INTERRUPT_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const EXIT_WITHIN_MS = 10_000;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zerodrop-bench-interrupt-'));
  console.log(`bench interrupt seed ${SEED} (replay: ZERODROP_INTERRUPT_SEED=${SEED})`);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const next = seededRandom(SEED);

async function startBench(name: string, only: string): Promise<MarkedProcess & { out: string }> {
  const dir = join(root, name);
  const out = join(dir, 'bench.json');
  const run = await startMarked(dir, ['src/bench/main.ts', '--quick', '--only', only, '--out', out]);
  return Object.assign(run, { out });
}

async function expectNothingLeft(run: MarkedProcess & { out: string }, context: string): Promise<void> {
  const left = await leftBehind(run);
  expect(left, context).toEqual({ processes: [], listening: [], tempDirs: [], records: [] });
  await expect(stat(run.out), `${context}: no report from an interrupted bench`).rejects.toThrow(/ENOENT/);
}

// The progress line each section prints when its servers start, and a stretch its loads certainly
// still run in (--quick): http runs zerodrop's generator and autocannon (then hey and wrk, where
// installed) for 3 s each; udp climbs its ladder straight to the echo, then through the balancer;
// provider starts and deletes pods for about 3 s, then runs `zerodrop run` on four scenarios, one
// after the other and then two at a time (about 30 s in all).
const CASES = [
  { only: 'http', after: 'http: ', fromMs: 300, toMs: 5_500, signal: 'SIGINT' },
  { only: 'udp', after: 'udp: ', fromMs: 300, toMs: 6_000, signal: 'SIGTERM' },
  { only: 'provider', after: 'provider: ', fromMs: 300, toMs: 20_000, signal: 'SIGINT' },
] as const;

describe.skipIf(!onPath('nginx'))(`interrupting npm run bench (seed ${SEED})${onPath('nginx') ? '' : ': skipped, nginx not on PATH (apt-get install nginx)'}`, () => {
  it.each(CASES.map((c, i) => [i + 1, c] as const))('case %i: %j leaves nothing behind', async (i, c) => {
    await using run = await startBench(`case-${i}`, c.only);
    const ms = Math.round(c.fromMs + next() * (c.toMs - c.fromMs));
    await Promise.race([run.printed(c.after).then(() => new Promise((r) => setTimeout(r, ms))), run.exited]);
    const context = `seed ${SEED}, case ${i}: ${c.signal} ${ms} ms after "${c.after}"`;
    expect(run.child.exitCode, `${context}: the bench ended before its moment\n${run.output()}`).toBeNull();
    run.child.kill(c.signal);
    const { code } = await within(EXIT_WITHIN_MS, `bench exiting after ${context}`, run.exited);
    expect(code, `${context}\n${run.output()}`).toBe(130);
    expect(run.output()).toContain(`${c.signal}: stopping`);
    await expectNothingLeft(run, `${context}\n${run.output()}`);
  });

  it('a second Ctrl-C right after the first exits at once; the exit hook still takes nginx and its directory', async () => {
    await using run = await startBench('twice', 'http');
    await run.printed('http: ');
    // nginx is up and a tool is loading it.
    await new Promise((r) => setTimeout(r, 1_500));
    run.child.kill('SIGINT');
    await run.printed('SIGINT: stopping');
    run.child.kill('SIGINT');
    const { code } = await within(2_000, 'bench exiting after two SIGINTs', run.exited);
    expect(code, run.output()).toBe(130);
    await expectNothingLeft(run, run.output());
  });
});
