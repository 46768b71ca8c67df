// `zerodrop run --workers N`: how many scenarios run at once (runMatrix's concurrency).

import { describe, expect, it } from 'vitest';

import { parseRunArgs } from './args.ts';

describe('--seed', () => {
  it('is absent unless given (each pair draws its own), and a whole 32-bit number when given', () => {
    expect(parseRunArgs([]).seed).toBeUndefined();
    expect(parseRunArgs(['--seed', '4294967295']).seed).toBe(4294967295);
    for (const value of ['1.5', 'x', '4294967296']) {
      expect(() => parseRunArgs(['--seed', value])).toThrow(new RegExp(`^--seed ${value}: expected a whole number from 0 to 4294967295`));
    }
  });
});

describe('--workers', () => {
  it('is 1 unless given', () => {
    expect(parseRunArgs([]).workers).toBe(1);
    expect(parseRunArgs(['--workers', '3']).workers).toBe(3);
  });

  it.each(['0', '2.5', 'many', '65'])('rejects %s, naming the flag and what is allowed', (value) => {
    expect(() => parseRunArgs(['--workers', value])).toThrow(new RegExp(`^--workers ${value}: expected a whole number of scenarios to run at once, from 1 to 64`));
  });
});
