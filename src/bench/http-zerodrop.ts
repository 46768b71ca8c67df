// zerodrop's HTTP generator as the benchmark runs it: in a process of its own, as autocannon, hey and
// wrk run in theirs, so that its heap holds one round's records only and the records of a round are
// gone when the next benchmark starts (half a million records a round kept in the benchmark's own
// process made its later rounds and the UDP ladder after them measure a garbage collector).
//
//   node src/bench/http-zerodrop.ts <url> <connections> <durationMs>
// prints one JSON line: the load's summary, how many requests were recorded and the CPU it used.

import { setTimeout as sleep } from 'node:timers/promises';
import { startHttpLoad, type LoadSummary } from '../load/http.ts';
import { Recorder } from '../observe/recorder.ts';

export interface ZerodropHttpRun {
  summary: LoadSummary;
  recorded: number;
  cpuSeconds: number;
}

export async function measureHttpGenerator(url: URL, connections: number, durationMs: number): Promise<ZerodropHttpRun> {
  const recorder = new Recorder();
  const cpu = process.cpuUsage();
  const load = startHttpLoad(
    'bench',
    { kind: 'http', service: 'nginx', path: '/', keepAlive: true, mode: 'closed', connections, timeoutMs: 5_000 },
    { host: url.hostname, port: Number(url.port) },
    recorder,
    { maxDurationMs: durationMs + 1_000, maxRequests: 5_000_000 },
  );
  await sleep(durationMs);
  const summary = await load.stop();
  const used = process.cpuUsage(cpu);
  return { summary, recorded: recorder.timeline.requests.length, cpuSeconds: (used.user + used.system) / 1e6 };
}

if (import.meta.main) {
  const [url = '', connections = '', durationMs = ''] = process.argv.slice(2);
  const run = await measureHttpGenerator(new URL(url), Number(connections), Number(durationMs));
  console.log(JSON.stringify(run));
}
