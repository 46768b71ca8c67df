// A reporter module by path: its default export is the reporter, a class of one or a factory;
// anything else is a UsageError naming the flag, the path and what to export. And many reporters
// heard as one, in order.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../config/usage-error.ts';
import { allReporters } from './index.ts';
import { loadReporter } from './load.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zerodrop-reporter-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const module = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

describe('loadReporter', () => {
  it('takes a reporter object, a class of one, or a (async) factory as the default export; a .ts module too', async () => {
    const object = await loadReporter(await module('object.mjs', 'export default { onEnd() { return "object"; } };\n'), '--reporter');
    const made = await loadReporter(await module('class.mjs', 'export default class { onPairEnd() { return "class"; } }\n'), '--reporter');
    const factory = await loadReporter(await module('factory.mjs', 'export default async () => ({ onBegin() { return "factory"; } });\n'), '--reporter');
    const typed = await loadReporter(await module('typed.ts', 'const seen: string[] = [];\nexport default { onPairEnd(r: { id: string }): void { seen.push(r.id); } };\n'), '--reporter');
    expect([object.onEnd?.({} as never, {}), made.onPairEnd?.({} as never), factory.onBegin?.({ provider: 'local', pairs: [] })]).toEqual(['object', 'class', 'factory']);
    expect(typeof typed.onPairEnd).toBe('function');
  });

  it.each<[string, string, RegExp]>([
    ['none.mjs', 'export const onEnd = () => {};\n', /^--reporter .*none\.mjs: its default export is missing; export a reporter: an object with any of onBegin, onPairBegin, onProgress, onPairEnd, onEnd/],
    ['number.mjs', 'export default 42;\n', /^--reporter .*number\.mjs: its default export is number, not a reporter; export a reporter/],
    ['empty.mjs', 'export default { render() {} };\n', /^--reporter .*empty\.mjs: its default export has none of the events; export a reporter/],
    ['wrong.mjs', 'export default { onEnd: "later" };\n', /^--reporter .*wrong\.mjs: its default export has onEnd that is not a function/],
    ['broken.mjs', 'export default {\n', /^--reporter .*broken\.mjs: the module does not load: /],
  ])('%s is refused with what to export', async (name, text, message) => {
    const path = await module(name, text);
    const error = await loadReporter(path, '--reporter').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it('a path that does not exist is refused, saying what the module must export', async () => {
    await expect(loadReporter(join(dir, 'missing.ts'), '--reporter')).rejects.toThrow(/^--reporter .*missing\.ts: no such file; give the path of a module whose default export is a reporter/);
  });
});

describe('allReporters', () => {
  it('gives each event to each reporter in order, and waits for every onBegin and onEnd', async () => {
    const heard: string[] = [];
    const slow = { onBegin: async () => { await new Promise((r) => setTimeout(r, 20)); heard.push('a begin'); }, onPairEnd: () => heard.push('a end') };
    const other = { onBegin: () => { heard.push('b begin'); }, onEnd: async () => { heard.push('b run end'); } };
    const all = allReporters([slow, other]);
    await all.onBegin({ provider: 'local', pairs: [] });
    all.onPairEnd({} as never);
    all.onProgress({ scenario: 's', profile: 'p', phase: 'running' });
    await all.onEnd({} as never, {});
    expect(heard).toEqual(['a begin', 'b begin', 'a end', 'b run end']);
  });
});
