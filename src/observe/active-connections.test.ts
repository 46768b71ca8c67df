import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startActiveConnectionSampler } from './active-connections.ts';
import { Recorder } from './recorder.ts';

describe('startActiveConnectionSampler', () => {
  it('records open connections per pod when they change, down to 0, and nothing while they do not', async () => {
    const recorder = new Recorder();
    const sampler = startActiveConnectionSampler(recorder, { intervalMs: 20 });
    const a = recorder.openConnection({ service: 'gateway', clientPort: 1, pod: 'gw-1' });
    const b = recorder.openConnection({ service: 'gateway', clientPort: 2, pod: 'gw-1' });
    recorder.openConnection({ service: 'gateway', clientPort: 3, pod: 'gw-2' });
    recorder.openConnection({ service: 'gateway', clientPort: 4 }); // no endpoint: belongs to no pod
    await delay(70);
    a.close = recorder.now();
    await delay(70);
    b.close = recorder.now();
    await delay(70);
    sampler.stop();
    const samples = recorder.timeline.activeConnections ?? [];
    expect(samples.map((s) => s.active)).toEqual([
      { 'gw-1': 2, 'gw-2': 1 },
      { 'gw-1': 1, 'gw-2': 1 },
      { 'gw-1': 0, 'gw-2': 1 },
    ]);
    expect(samples.every((s) => s.service === 'gateway')).toBe(true);
    expect(samples.map((s) => s.t)).toEqual([...samples.map((s) => s.t)].sort((x, y) => x - y));
  });
});
