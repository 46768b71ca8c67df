import { describe, expect, it } from 'vitest';
import { Recorder } from '../observe/recorder.ts';
import { closeOwnConnection, openOwnConnection, ownConnectionAnswered, recordOwnStream } from './own-connection.ts';

describe('a load\'s own connection records', () => {
  it('records nothing where the Service\'s balancer records connections, or before the port is known', () => {
    const recorder = new Recorder();
    expect(openOwnConnection(recorder, undefined, 40000, 1)).toBeUndefined();
    expect(openOwnConnection(recorder, { service: 'svc' }, undefined, 1)).toBeUndefined();
    recordOwnStream(recorder, undefined, { start: 1, end: 2, localPort: 40000, pod: 'p' });
    expect(recorder.timeline.connections).toEqual([]);
  });

  it('names the pod of the first response, and keeps it', () => {
    const recorder = new Recorder();
    const record = openOwnConnection(recorder, { service: 'svc' }, 40000, 12)!;
    expect(record).toMatchObject({ service: 'svc', clientPort: 40000, open: 12, upstream: 'open' });
    ownConnectionAnswered(record, 'gw-1');
    ownConnectionAnswered(record, 'gw-2');
    closeOwnConnection(record, 30);
    closeOwnConnection(record, 40);
    expect(record).toMatchObject({ pod: 'gw-1', upstream: 'ok', close: 30 });
  });

  it('counts a connection closed before any response for no pod', () => {
    const recorder = new Recorder();
    const record = openOwnConnection(recorder, { service: 'svc' }, 40000, 12)!;
    closeOwnConnection(record, 20);
    expect(record).toMatchObject({ upstream: 'error', close: 20 });
    expect(record.pod).toBeUndefined();
  });

  it('records an ended stream as a connection of the gateway it went through, else its pod', () => {
    const recorder = new Recorder();
    recordOwnStream(recorder, { service: 'gw' }, { start: 1, end: 9, localPort: 40001, gateway: 'gw-1', pod: 'be-1' });
    recordOwnStream(recorder, { service: 'be' }, { start: 2, end: 8, localPort: 40002, pod: 'be-2' });
    recordOwnStream(recorder, { service: 'be' }, { start: 3, end: 4 });
    expect(recorder.timeline.connections).toMatchObject([
      { service: 'gw', clientPort: 40001, open: 1, close: 9, pod: 'gw-1', upstream: 'ok' },
      { service: 'be', clientPort: 40002, open: 2, close: 8, pod: 'be-2', upstream: 'ok' },
      { service: 'be', clientPort: 0, open: 3, close: 4, upstream: 'error' },
    ]);
  });
});
