// Loaded with `node --import` into a process the `scale` bench measures: on exit, writes the
// process's peak resident set size in bytes to $ZERODROP_PEAK_RSS_FILE (Linux reports maxRSS in KB).

import { writeFileSync } from 'node:fs';

const file = process.env['ZERODROP_PEAK_RSS_FILE'];
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
