import { describe, expect, it } from 'vitest';
import { TimelineBuilder } from '../../test-support/assert.ts';
import { placeRoutedConnections, type RoutedConnection } from './routed-connections.ts';

const to = { host: '198.18.0.10', port: 30080 };
const serviceAt = (t: RoutedConnection['to']) => (t.host === to.host && t.port === to.port ? 'backend' : t.port === 30081 ? 'gateway' : undefined);
const podAt = (ip: string) => ({ '198.18.32.5': 'backend-1', '198.18.33.7': 'backend-2' })[ip];

describe('placeRoutedConnections', () => {
  it('names the pod of a connection no response named, from the routed connection of its client port nearest its open', () => {
    const b = new TimelineBuilder();
    const c = b.connection({ service: 'backend', clientPort: 40000, open: 1000, close: 1200, upstream: 'error' });
    const placed = placeRoutedConnections(
      b.timeline,
      [
        { t: 998.5, clientPort: 40000, to, podIp: '198.18.33.7' },
        // The same port, an earlier connection: not this one.
        { t: 200, clientPort: 40000, to, podIp: '198.18.32.5' },
      ],
      serviceAt,
      podAt,
    );
    expect(placed).toBe(1);
    expect(c.pod).toBe('backend-2');
  });

  it('leaves a connection unplaced when nothing matches its port, its Service and its time, or the address names no pod', () => {
    const b = new TimelineBuilder();
    const records = [40001, 40002, 40003, 40004].map((clientPort) => b.connection({ service: 'backend', clientPort, open: 1000, close: 1200, upstream: 'error' }));
    const placed = placeRoutedConnections(
      b.timeline,
      [
        { t: 1000, clientPort: 49999, to, podIp: '198.18.32.5' },
        { t: 1000, clientPort: 40002, to: { host: to.host, port: 30081 }, podIp: '198.18.32.5' },
        { t: 2500, clientPort: 40003, to, podIp: '198.18.32.5' },
        { t: 1000, clientPort: 40004, to, podIp: '198.18.40.1' },
      ],
      serviceAt,
      podAt,
    );
    expect(placed).toBe(0);
    expect(records.map((r) => r.pod)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('keeps the pod a response already named', () => {
    const b = new TimelineBuilder();
    const c = b.connection({ service: 'backend', clientPort: 40000, open: 1000, close: 1200, pod: 'backend-1' });
    expect(placeRoutedConnections(b.timeline, [{ t: 1000, clientPort: 40000, to, podIp: '198.18.33.7' }], serviceAt, podAt)).toBe(0);
    expect(c.pod).toBe('backend-1');
  });
});
