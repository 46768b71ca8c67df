// `--open`: hands the report to the user's browser, without waiting for it. $BROWSER wins (the
// convention of xdg-utils and many CLIs); otherwise the platform's opener.

import { spawn } from 'node:child_process';

export function openerFor(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): [string, string[]] {
  const browser = env['BROWSER'];
  if (browser !== undefined && browser.trim() !== '') return [browser, []];
  if (platform === 'darwin') return ['open', []];
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  return ['xdg-open', []];
}

/** Starts the opener on `path`; resolves to an error message when it could not be started. */
export function openInBrowser(path: string): Promise<string | undefined> {
  const [command, args] = openerFor();
  return new Promise((resolve) => {
    const child = spawn(command, [...args, path], { detached: true, stdio: 'ignore' });
    child.once('error', (error) => resolve(`could not start ${command}: ${error.message}; open ${path} yourself`));
    child.once('spawn', () => {
      child.unref();
      resolve(undefined);
    });
  });
}
