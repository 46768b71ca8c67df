// Runs one packet load (udp.ts) in a worker thread on the run's clock, and sends back its summary,
// its flow records and its notes when it ends. Messages in: 'stop' (stop sending, let echoes in
// flight arrive) and 'abort' (stop at once).

import { parentPort, workerData } from 'node:worker_threads';

import type { FlowRecord } from '../model/timeline.ts';
import { Clock } from '../observe/clock.ts';
import { startUdpLoad, type PacketRecorder, type PacketWorkerData, type PacketWorkerResult } from './udp.ts';

const port = parentPort;
if (!port) throw new Error('udp-worker.ts runs as a worker thread');
const data = workerData as PacketWorkerData;
const clock = new Clock(data.origin);
const flows: FlowRecord[] = [];
const events: Extract<PacketWorkerResult, { flows: unknown }>['events'] = [];
const recorder: PacketRecorder = {
  now: () => clock.now(),
  flow: (record) => flows.push(record),
  event: (kind, fields) => events.push({ ...fields, t: fields.t ?? clock.now(), kind }),
};
const abort = new AbortController();
const load = startUdpLoad(data.id, data.spec, data.target, recorder, { thread: 'main', signal: abort.signal });
port.on('message', (message: unknown) => {
  if (message === 'stop') void load.stop();
  else if (message === 'abort') abort.abort(new Error('aborted'));
});
load.done.then(
  (summary) => port.postMessage({ summary, flows, events } satisfies PacketWorkerResult),
  (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies PacketWorkerResult),
);
