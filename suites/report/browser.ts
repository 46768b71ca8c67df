// Headless Chromium for the report tests: Debian's /usr/bin/chromium driven by playwright-core, no
// browser download. Tests skip with this reason when it is not installed.

import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env['ZERODROP_CHROMIUM'] ?? '/usr/bin/chromium';

export const chromiumMissing: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} not found: install Debian's chromium (apt-get install chromium) to run the browser checks of the HTML report`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
