// node:util parseArgs for every subcommand, with its errors turned into one UsageError line that
// names the flag and what is allowed (its own messages are long and do not list the flags).

import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
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
