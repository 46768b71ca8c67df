import { describe, expect, it } from 'vitest';
import { drainScenario, TimelineBuilder } from '../../test-support/assert.ts';
import { connectionOf, joinedRequests, joinRequestsToConnections } from './join.ts';

describe('joinRequestsToConnections', () => {
  it('turns a reset on a connection the pod refused into refused, and names the pod', () => {
    const b = new TimelineBuilder();
    const r = b.request({ start: 100, end: 100.5, localPort: 41_000, connectionStart: 100, outcome: 'reset', error: 'ECONNRESET' });
    b.connection({ clientPort: 41_000, pod: 'backend-2', open: 100.2, close: 100.5, upstream: 'refused' });
    expect(joinRequestsToConnections(b.timeline)).toBe(1);
    expect(b.now(r)).toMatchObject({ outcome: 'refused', pod: 'backend-2', error: 'ECONNRESET' });
  });

  it('turns eof and error into refused too, and no-endpoint into refused without a pod', () => {
    const b = new TimelineBuilder();
    const eof = b.request({ start: 10, end: 11, localPort: 1, outcome: 'eof' });
    const error = b.request({ start: 10, end: 11, localPort: 2, outcome: 'error' });
    const none = b.request({ start: 10, end: 11, localPort: 3, outcome: 'reset' });
    b.connection({ clientPort: 1, pod: 'p', open: 10, close: 11, upstream: 'refused' });
    b.connection({ clientPort: 2, pod: 'p', open: 10, close: 11, upstream: 'refused' });
    b.connection({ clientPort: 3, open: 10, close: 11, upstream: 'no-endpoint' });
    expect(joinRequestsToConnections(b.timeline)).toBe(3);
    expect(b.now(eof).outcome).toBe('refused');
    expect(b.now(error).outcome).toBe('refused');
    expect(b.now(none).outcome).toBe('refused');
    expect(b.now(none).pod).toBeUndefined();
  });

  it('places a refused connect, which has a port but never opened, on the pod the connection was sent to', () => {
    const b = new TimelineBuilder();
    const r = b.request({ start: 62_340, end: 62_367.8, localPort: 43_210, outcome: 'refused', error: 'connect ECONNREFUSED 198.18.0.10:30001' });
    b.connection({ clientPort: 43_210, pod: 'gateway-2', open: 62_340.4, close: 62_367.8, upstream: 'refused' });
    expect(joinRequestsToConnections(b.timeline)).toBe(1);
    expect(b.now(r)).toMatchObject({ outcome: 'refused', pod: 'gateway-2' });
  });

  it('keeps a reset on a connection the pod reset mid-way, but names the pod', () => {
    const b = new TimelineBuilder();
    const r = b.request({ start: 10, end: 30, localPort: 5, outcome: 'reset' });
    b.connection({ clientPort: 5, pod: 'p', open: 10.1, close: 30, upstream: 'reset' });
    expect(joinRequestsToConnections(b.timeline)).toBe(1);
    expect(b.now(r)).toMatchObject({ outcome: 'reset', pod: 'p' });
  });

  it('does not call a timeout refused', () => {
    const b = new TimelineBuilder();
    const r = b.request({ start: 10, end: 1010, localPort: 5, outcome: 'timeout' });
    b.connection({ clientPort: 5, pod: 'p', open: 10.1, close: 1010, upstream: 'refused' });
    joinRequestsToConnections(b.timeline);
    expect(b.now(r).outcome).toBe('timeout');
    expect(b.now(r).pod).toBe('p');
  });

  it('fills the pod of ok requests that lack it and leaves the others alone', () => {
    const b = new TimelineBuilder();
    const missing = b.request({ start: 10, end: 11, localPort: 7 });
    const known = b.request({ start: 20, end: 21, localPort: 8, pod: 'from-response' });
    const noPort = b.request({ start: 30, end: 31, outcome: 'reset' });
    b.connection({ clientPort: 7, pod: 'p', open: 10, close: 11 });
    b.connection({ clientPort: 8, pod: 'balancer-says', open: 20, close: 21 });
    expect(joinRequestsToConnections(b.timeline)).toBe(1);
    expect(b.now(missing).pod).toBe('p');
    expect(b.now(known).pod).toBe('from-response');
    expect(b.now(noPort)).toMatchObject({ outcome: 'reset' });
    expect(b.now(noPort).pod).toBeUndefined();
  });

  it('matches by time when a client port is reused', () => {
    const b = new TimelineBuilder();
    const a = b.connection({ clientPort: 9, pod: 'a', open: 0, close: 100 });
    const c = b.connection({ clientPort: 9, pod: 'c', open: 100.5, close: 300, upstream: 'refused' });
    const onA = b.request({ start: 50, end: 60, localPort: 9, connectionStart: 0, newConnection: false });
    const onC = b.request({ start: 100.3, end: 101, localPort: 9, connectionStart: 100.3, outcome: 'reset' });
    const late = b.request({ start: 200, end: 201, localPort: 9, newConnection: false });
    const outside = b.request({ start: 400, end: 401, localPort: 9, outcome: 'reset' });
    expect(connectionOf(b.timeline, onA)).toBe(a);
    expect(connectionOf(b.timeline, onC)).toBe(c);
    expect(connectionOf(b.timeline, late)).toBe(c);
    expect(connectionOf(b.timeline, outside)).toBeUndefined();
    joinRequestsToConnections(b.timeline);
    expect(b.now(onA).pod).toBe('a');
    expect(b.now(onC)).toMatchObject({ pod: 'c', outcome: 'refused' });
    expect(b.now(outside).outcome).toBe('reset');
  });

  it('is idempotent', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    expect(joinRequestsToConnections(tl)).toBeGreaterThan(0);
    expect(joinRequestsToConnections(tl)).toBe(0);
  });

  it('gives every failure of a broken drain its pod and the refusals their class', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    const failed = () => tl.requests.filter((r) => r.outcome !== 'ok');
    expect(failed().every((r) => r.pod === undefined)).toBe(true);
    expect(failed().map((r) => r.outcome).sort()).toEqual(['eof', 'reset', 'reset', 'reset', 'reset']);
    joinRequestsToConnections(tl);
    expect(failed().map((r) => r.pod)).toEqual(Array(5).fill('backend-2'));
    expect(failed().map((r) => r.outcome).sort()).toEqual(['eof', 'refused', 'refused', 'refused', 'refused']);
  });
});

describe('joinedRequests', () => {
  it('answers what the in-place join would, and leaves the timeline as it was', () => {
    const tl = drainScenario('exit-on-sigterm').build();
    const before = tl.requests.toArray();
    const joined = joinedRequests(tl);
    expect(tl.requests.toArray()).toEqual(before);
    joinRequestsToConnections(tl);
    expect(joined.toArray()).toEqual(tl.requests.toArray());
    expect(joined.toArray()).not.toEqual(before);
  });

  it('copies only what it refines: the timeline\'s own requests when there is nothing', () => {
    const b = new TimelineBuilder();
    const ok = b.request({ start: 10, end: 11, localPort: 1, pod: 'p' });
    const reset = b.request({ start: 10, end: 11, localPort: 2, outcome: 'reset' });
    b.connection({ clientPort: 2, pod: 'p', open: 10, close: 11, upstream: 'refused' });
    const joined = joinedRequests(b.timeline);
    expect(joined).not.toBe(b.timeline.requests);
    expect(joined.at(0)).toEqual(ok);
    expect(joined.at(1)).toMatchObject({ outcome: 'refused', pod: 'p' });
    expect(b.now(reset).outcome).toBe('reset');
    joinRequestsToConnections(b.timeline);
    expect(joinedRequests(b.timeline)).toBe(b.timeline.requests);
  });
});
