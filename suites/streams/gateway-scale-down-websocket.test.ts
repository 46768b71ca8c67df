import { describeStreamCases } from './gateway-stream-cases.ts';

// 3 -> 1: two pods drain at once, each with WebSockets in flight at its delete.
describeStreamCases('gateway-scale-down-websocket', 2, {
  system: 'haproxy',
  profile: 'haproxy-naive',
  fault: /close 1006/,
  how: 'the hard stop of each pod scaled in cuts its WebSockets without a close frame',
}, { scaleAtMs: 0 });
