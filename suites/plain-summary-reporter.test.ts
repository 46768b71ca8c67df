// The closing lines of `npm test`: what a CI log's tail must say about failures.

import type { TestModule } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { closingLines } from './plain-summary-reporter.ts';

type State = 'passed' | 'failed' | 'skipped';

function module(file: string, tests: [string, State][], opts: { state?: State; errors?: { message: string }[] } = {}): TestModule {
  return {
    relativeModuleId: file,
    state: () => opts.state ?? (tests.some(([, s]) => s === 'failed') ? 'failed' : 'passed'),
    errors: () => opts.errors ?? [],
    children: { allTests: () => tests.map(([fullName, state]) => ({ fullName, result: () => ({ state }) })) },
  } as unknown as TestModule;
}

describe('the plain summary reporter', () => {
  it('names every failed test by file and full name before the count line, which stays last', () => {
    const lines = closingLines([
      module('src/a.test.ts', [['a > works', 'passed'], ['a > breaks', 'failed']]),
      module('src/b.test.ts', [['b > skipped', 'skipped'], ['b > also breaks', 'failed']]),
      module('src/c.test.ts', [['c > fine', 'passed']]),
    ]);
    expect(lines).toEqual(['', 'Failed (2):', '  FAIL src/a.test.ts > a > breaks', '  FAIL src/b.test.ts > b > also breaks', '2 passed, 2 failed, 1 skipped']);
  });

  it('names a file that failed outside its tests, and unhandled errors, by their first line', () => {
    const lines = closingLines(
      [module('src/d.test.ts', [], { state: 'failed', errors: [{ message: 'Cannot find module x\n    at stack' }] })],
      [new Error('EADDRINUSE 127.0.0.1:8080\nstack')],
    );
    expect(lines).toEqual(['', 'Failed (2):', '  FAIL src/d.test.ts (Cannot find module x)', '  FAIL unhandled error: EADDRINUSE 127.0.0.1:8080', '0 passed, 0 failed, 0 skipped']);
  });

  it('says only the counts when nothing failed', () => {
    expect(closingLines([module('src/c.test.ts', [['c > fine', 'passed']])])).toEqual(['', '1 passed, 0 failed, 0 skipped']);
  });
});
