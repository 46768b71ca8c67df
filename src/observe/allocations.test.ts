import { describe, expect, it } from 'vitest';

import type { AllocationRecord, Timeline } from '../model/timeline.ts';
import { allocationPod } from './allocations.ts';

const allocation = (relayed: string, start: number): AllocationRecord => ({ load: 'allocations', flow: 0, localPort: 40000, start, end: start + 5, outcome: 'ok', relayed });

describe('allocationPod', () => {
  it('without a balancer record, the pod whose IP is the relayed address, the latest to start with it', () => {
    const timeline = {
      events: [
        { t: 100, kind: 'pod-started', pod: 'gw-old', detail: { podIP: '198.18.129.3' } },
        { t: 200, kind: 'pod-started', pod: 'gw-a', detail: { podIP: '198.18.128.4' } },
        { t: 300, kind: 'pod-started', pod: 'gw-b', detail: { podIP: '198.18.129.3' } },
      ],
    } as unknown as Timeline;
    expect(allocationPod(timeline, allocation('198.18.129.3:56272', 1000))).toBe('gw-b');
    expect(allocationPod(timeline, allocation('198.18.129.3:56272', 250))).toBe('gw-old');
    expect(allocationPod(timeline, allocation('198.18.128.4:1', 1000))).toBe('gw-a');
    expect(allocationPod(timeline, allocation('10.0.0.1:1', 1000))).toBeUndefined();
  });
});
