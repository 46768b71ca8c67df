// README.md's "Use it in your repository" section as steps a test can follow word for word: the
// install command, the files it shows (each block starts with a `// path` comment line) and the
// commands after them, comments stripped.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.ts';

export interface ReadmeAdoption {
  /** The section's prose: where it asks for Node and `npm init -y`. */
  text: string;
  install: string[];
  files: Record<string, string>;
  commands: string[][];
}

const SECTION = '## Use it in your repository';

/** Splits a shell line into words (double-quoted words kept whole), its comment dropped. */
export function shellWords(line: string): string[] {
  const code = line.replace(/\s+#.*$/, '').trim();
  return [...code.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

export async function readmeAdoption(): Promise<ReadmeAdoption> {
  const readme = await readFile(join(packageRoot, 'README.md'), 'utf8');
  const start = readme.indexOf(SECTION);
  if (start === -1) throw new Error(`README.md has no "${SECTION}" section`);
  const end = readme.indexOf('\n## ', start + SECTION.length);
  const text = readme.slice(start, end === -1 ? undefined : end);
  const blocks = [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] ?? '', body: m[2] ?? '' }));
  const [install, code, after] = blocks;
  if (install?.lang !== 'sh' || code?.lang !== 'ts' || after?.lang !== 'sh') throw new Error('README.md adoption: expected sh, ts and sh blocks, in that order');
  const files: Record<string, string> = {};
  for (const part of code.body.split(/^(?=\/\/ \S+\.[cm]?[jt]s\b)/m)) {
    const name = /^\/\/ (\S+\.[cm]?[jt]s)\b/.exec(part)?.[1];
    if (name === undefined) throw new Error(`README.md adoption: a code part without a "// path" line: ${part.slice(0, 60)}`);
    files[name] = part.split('\n').slice(1).join('\n').trim() + '\n';
  }
  const lines = (body: string) => body.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).map(shellWords);
  const [installLine] = lines(install.body);
  if (installLine === undefined) throw new Error('README.md adoption: no install command');
  return { text, install: installLine, files, commands: lines(after.body) };
}
