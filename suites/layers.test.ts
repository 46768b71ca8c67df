// The layer rule (eslint-rules/layers.js) as `npm run lint` runs it: a back-arrow fails, the repository has none.

import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import layers, { LAYERS } from '../eslint-rules/layers.js';

const BACK_ARROW = "import { runMatrix } from '../runner/run-matrix.ts';\nexport const back = runMatrix;\n";

describe('zerodrop/layers', () => {
  it('is on for src/ in the repository config, and fails a back-arrow (a model module importing the runner)', async () => {
    const config = (await new ESLint().calculateConfigForFile('src/model/back-arrow.ts')) as { rules?: Record<string, unknown> };
    expect(config.rules?.['zerodrop/layers']).toEqual([2]);
    const [result] = await ruleOnly().lintText(BACK_ARROW, { filePath: 'src/model/back-arrow.ts' });
    expect(result?.messages.map((m) => m.message)).toEqual([expect.stringContaining('src/model may not import src/runner (src/runner/run-matrix.ts)')]);
  });

  it('leaves a downward import, an import within a layer and a test alone', async () => {
    const eslint = ruleOnly();
    const down = await eslint.lintText("import type { Timeline } from '../model/timeline.ts';\nexport type T = Timeline;\n", { filePath: 'src/runner/down.ts' });
    const test = await eslint.lintText(BACK_ARROW, { filePath: 'src/model/back-arrow.test.ts' });
    const sibling = await eslint.lintText("import { catalog } from '../scenarios/index.ts';\nexport const c = catalog;\n", { filePath: 'src/providers/up.ts' });
    expect([...down, ...test].flatMap((r) => r.messages)).toEqual([]);
    expect(sibling.flatMap((r) => r.messages)).toEqual([]);
    const across = await eslint.lintText("import { catalog } from '../scenarios/index.ts';\nexport const c = catalog;\n", { filePath: 'src/profiles/up.ts' });
    expect(across.flatMap((r) => r.messages.map((m) => m.ruleId))).toEqual(['zerodrop/layers']);
  });

  it('finds no back-arrow in src/', async () => {
    const results = await ruleOnly().lintFiles(['src/**/*.ts']);
    expect(results.length).toBeGreaterThan(100);
    expect(results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.message}`))).toEqual([]);
  }, 120_000);

  it('names every folder of src/ in one layer', async () => {
    const { readdir } = await import('node:fs/promises');
    const entries = (await readdir('src')).filter((name) => !name.endsWith('.test.ts'));
    expect(entries.filter((name) => !LAYERS.flat().includes(name))).toEqual([]);
  });
});

/** ESLint with the layer rule alone (no type information: fast over the whole of src/). */
function ruleOnly(): ESLint {
  return new ESLint({
    overrideConfigFile: true,
    allowInlineConfig: false,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { zerodrop: layers }, rules: { 'zerodrop/layers': 'error' } }],
  });
}
