// node:util parseArgs for every subcommand, with its errors turned into one UsageError line that
// names the flag and what is allowed (its own messages are long and do not list the flags). A
// command's flags are one table (FlagTable): parseFlags parses with it and flagHelp prints its
// help's Options from it, so a flag cannot be accepted and left out of `--help`, nor the reverse.

import { parseArgs, type ParseArgsOptionDescriptor, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './usage-error.ts';

export function parseFlags<const O extends ParseArgsOptionsConfig>(command: string, argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals, options });
  } catch (error) {
    const e = error as Error & { code?: string };
    const flags = Object.entries(options).map(([name, o]) => (o.type === 'string' ? `--${name} <value>` : `--${name}`));
    const flag = /'([^' ]+)/.exec(e.message)?.[1] ?? '';
    const lead = flag.replace(/^--?/, '').split('=')[0] ?? '';
    switch (e.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`${command}: unknown flag ${flag}; flags: ${flags.join(', ')}`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        throw new UsageError(
          options[lead]?.type === 'boolean' ? `${command}: ${flag} is a switch and takes no value` : `${command}: ${flag} expects a value, e.g. ${flag} <value>`,
        );
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        throw new UsageError(`${command}: unexpected argument ${flag}; flags: ${flags.join(', ')}`);
      default:
        throw new UsageError(`${command}: ${e.message.split('\n')[0] ?? e.message}`);
    }
  }
}

/** A flag as parseArgs takes it, with its line of help. */
export type FlagSpec = ParseArgsOptionDescriptor & {
  /** The value's name in help (FILE, N); none for a switch. */
  value?: string;
  /** What it does and its default. A `\n` starts a line printed as it is (a list under the flag). */
  help: string;
};

export type FlagTable = Record<string, FlagSpec>;

/** A command's help Options: a flag a line (wrapped at `width`), in the table's order. */
export function flagHelp(table: FlagTable, width = 100): string {
  const lefts = Object.entries(table).map(([name, spec]) => `--${name}${spec.value !== undefined ? ` ${spec.value}` : ''}`);
  const column = 2 + Math.min(22, Math.max(...lefts.map((l) => l.length))) + 2;
  const indent = ' '.repeat(column);
  return Object.values(table)
    .map((spec, i) => {
      const left = `  ${lefts[i]}`;
      const [first = '', ...verbatim] = spec.help.split('\n');
      const lines: string[] = [];
      let line = left.length + 2 > column ? `${left}  ` : left.padEnd(column);
      for (const word of first.split(' ')) {
        if (line.trim() !== '' && line.length + word.length > width && line.length > column) {
          lines.push(line.trimEnd());
          line = indent;
        }
        line += line.endsWith(' ') ? word : ` ${word}`;
      }
      lines.push(line.trimEnd(), ...verbatim.map((l) => `${indent}  ${l}`));
      return lines.join('\n');
    })
    .join('\n');
}
