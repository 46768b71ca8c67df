// zerodrop/layers: the layers of src/ import downwards only, so that data and calls run one way
// (docs/architecture.md, "Layers"). A module may import its own folder and any folder of a lower
// layer; an import of a higher or a sibling layer (a back-arrow) is an error naming both and the order.
//
// Tests (*.test.ts) are exempt: a test drives a layer from above (a provider's test runs a scenario
// through the runner). Imports that leave src/ (fixtures, node_modules) are not layers.

import { dirname, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** Lowest first; the folders (or single files) of one entry are siblings and do not import each other. */
export const LAYERS = [
  ['model', 'state', 'paths.ts', 'end-process.ts'],
  ['observe'],
  ['assert', 'profiles'],
  ['scenarios'],
  ['providers', 'report'],
  ['chaos'],
  ['load'],
  ['runner'],
  ['config'],
  ['api'],
  ['cli', 'vitest', 'bench', 'index.ts'],
];

/**
 * Files that sit in another layer than their folder's, each for its reason. A file listed here is
 * placed by its own entry both when it imports and when it is imported.
 */
export const EXCEPTIONS = {
  // The error every layer throws for bad usage (a profile's bad definition too); it imports nothing.
  'config/usage-error.ts': 'model',
  // The eviction loop of a node drain, which the providers carry out; it imports nothing.
  'chaos/drain.ts': 'model',
  // `zerodrop clean`'s cluster half deletes through the kube providers' clients.
  'state/clean-clusters.ts': 'chaos',
  // The cached builds of Go programs, which a profile runs too (caddy-built), not only the netns
  // cluster; it imports nothing of src/, and lives beside its first users.
  'providers/netns/go-module-build.ts': 'model',
};

const RANK = new Map(LAYERS.flatMap((names, rank) => names.map((name) => [name, rank])));

/** The layer of a file under src/, or undefined for a file elsewhere. */
export function layerOf(file) {
  const path = relative(resolve(ROOT, 'src'), file).split(sep).join('/');
  if (path.startsWith('..') || path === '') return undefined;
  const layer = EXCEPTIONS[path] ?? path.split('/')[0];
  return RANK.has(layer) ? layer : undefined;
}

const order = LAYERS.map((names) => names.join('/')).join(' -> ');

/** @type {import('eslint').Rule.RuleModule} */
export const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'src/ layers import downwards only (docs/architecture.md)' },
    schema: [],
    messages: {
      backArrow: 'src/{{from}} may not import src/{{to}} ({{target}}): layers import downwards only: {{order}} (eslint-rules/layers.js)',
    },
  },
  create(context) {
    const file = context.physicalFilename ?? context.filename;
    if (/\.test\.[cm]?[jt]s$/.test(file)) return {};
    const from = layerOf(file);
    if (from === undefined) return {};
    const check = (source) => {
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(file), source.value);
      const to = layerOf(target);
      if (to === undefined || to === from) return;
      if (RANK.get(to) < RANK.get(from)) return;
      context.report({ node: source, messageId: 'backArrow', data: { from, to, target: relative(ROOT, target), order } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default { rules: { layers: layersRule } };
