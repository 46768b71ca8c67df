import { describe, expect, it } from 'vitest';
import { ProgrammingSchedule, seededRandom, serviceSeed } from './programming-schedule.ts';

const nodes = ['node-a', 'node-b'] as const;

describe('programming schedule', () => {
  it('gives each node its own lag per change, within delay + spread, the same for the same seed', () => {
    const lags = (seed: number) => {
      const s = new ProgrammingSchedule({ delayMs: 200, spreadMs: 1000, nodes, seed });
      return Array.from({ length: 50 }, (_, i) => s.next(i * 10_000, `MODIFIED pod-${i % 5}`).map((n) => n.inMs));
    };
    const a = lags(42);
    expect(lags(42)).toEqual(a);
    expect(lags(43)).not.toEqual(a);
    for (const change of a) for (const lag of change) expect(lag >= 200 && lag < 1200).toBe(true);
    // The nodes disagree on most changes, and the lags cover the spread rather than one value.
    expect(a.filter(([x, y]) => x !== y).length).toBeGreaterThan(40);
    const flat = a.flat();
    expect(Math.max(...flat) - Math.min(...flat)).toBeGreaterThan(800);
  });

  it('draws by the change, not by the order changes come in: the same seed replays a change interleaved differently', () => {
    const a = new ProgrammingSchedule({ delayMs: 100, spreadMs: 2000, nodes, seed: 3 });
    const b = new ProgrammingSchedule({ delayMs: 100, spreadMs: 2000, nodes, seed: 3 });
    const drawn = (n: { drawnMs: number }[]) => n.map((x) => x.drawnMs);
    a.next(0, 'ADDED web-1');
    const inA = drawn(a.next(10_000, 'MODIFIED web-2 false/true/true'));
    b.next(0, 'ADDED web-2');
    b.next(0, 'ADDED web-1');
    expect(drawn(b.next(10_000, 'MODIFIED web-2 false/true/true'))).toEqual(inA);
    // The second such change draws anew.
    expect(drawn(b.next(20_000, 'MODIFIED web-2 false/true/true'))).not.toEqual(inA);
  });

  it('never applies a change on a node before the change made before it', () => {
    const s = new ProgrammingSchedule({ delayMs: 0, spreadMs: 1000, nodes, seed: 7 });
    const applied = Array.from({ length: 200 }, (_, i) => s.next(i * 5, `MODIFIED pod-${i}`).map((n) => i * 5 + n.inMs));
    for (let i = 1; i < applied.length; i++) {
      for (let n = 0; n < nodes.length; n++) expect(applied[i]![n]!).toBeGreaterThanOrEqual(applied[i - 1]![n]!);
    }
  });

  it('without a spread, applies every change on every node exactly at the delay', () => {
    const s = new ProgrammingSchedule({ delayMs: 300, spreadMs: 0, nodes, seed: 1 });
    const at = (n: { inMs: number }[]) => n.map((x) => x.inMs);
    expect([at(s.next(0, 'ADDED p')), at(s.next(50, 'MODIFIED p'))]).toEqual([
      [300, 300],
      [300, 300],
    ]);
  });

  it('seeds each Service apart from the run seed, reproducibly', () => {
    expect(serviceSeed(5, 'gateway')).toBe(serviceSeed(5, 'gateway'));
    expect(serviceSeed(5, 'gateway')).not.toBe(serviceSeed(5, 'backend'));
    expect(serviceSeed(5, 'gateway')).not.toBe(serviceSeed(6, 'gateway'));
    const r = seededRandom(9);
    const draws = Array.from({ length: 1000 }, r);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
