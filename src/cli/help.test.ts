// One flag table: each command's help prints the flags it parses, and docs/cli.md's flag tables
// list the same flags, no more and no fewer.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../paths.ts';
import { FLAGS, HELP } from './help.ts';

const COMMANDS = Object.keys(FLAGS) as (keyof typeof FLAGS)[];
const DOC = readFileSync(join(packageRoot, 'docs/cli.md'), 'utf8');

/** The flags of the table that follows "The flags of `command`" in docs/cli.md. */
function documented(command: string): string[] {
  const at = DOC.indexOf(`The flags of \`${command}\``);
  if (at < 0) return [];
  const lines = DOC.slice(at).split('\n').slice(1);
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows = lines.slice(start).filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')));
  return rows.slice(2).map((row) => /^\| `--([a-z-]+)/.exec(row)?.[1] ?? `(no flag in ${row})`);
}

/** The flags a help text lists under Options: each at the start of a line. */
function helped(text: string): string[] {
  return [...text.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1] ?? '');
}

describe('one flag table', () => {
  it.each(COMMANDS)('zerodrop help %s lists every flag the command parses, once', (command) => {
    expect(helped(HELP[command])).toEqual(Object.keys(FLAGS[command]));
  });

  it.each(COMMANDS)('docs/cli.md lists the flags of %s, no more and no fewer', (command) => {
    expect(documented(command).sort()).toEqual(Object.keys(FLAGS[command]).sort());
  });

  it("docs/cli.md's examples use only the flags of their command", () => {
    const examples = [...DOC.matchAll(/^npx zerodrop (\w+)(.*)$/gm)];
    expect(examples.length).toBeGreaterThan(5);
    for (const [line, command = '', rest = ''] of examples) {
      const flags = [...rest.replace(/#.*/, '').matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1] ?? '');
      expect(flags.filter((flag) => !(flag in (FLAGS[command as keyof typeof FLAGS] ?? {}))), line).toEqual([]);
    }
  });
});
