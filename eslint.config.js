// Lint runs in `npm test`; type-aware rules catch the promise mistakes that matter in a harness
// full of timers, sockets and child processes (a forgotten await is a leaked pod).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint-rules/layers.js';

export default tseslint.config(
  // examples/ is an adopter's repository in miniature, linted and type-checked where it is installed (suites/package.test.ts).
  { ignores: ['node_modules/', 'reports/', 'coverage/', 'dist/', 'examples/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The layers of src/ import downwards only (docs/architecture.md, "Layers").
  { files: ['src/**/*.ts'], plugins: { zerodrop: layers }, rules: { 'zerodrop/layers': 'error' } },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', Buffer: 'readonly', performance: 'readonly', setImmediate: 'readonly' },
    },
  },
);
