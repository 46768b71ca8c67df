import { describeStreamCases } from './gateway-stream-cases.ts';

// 3 -> 1: two pods drain at once, each with event streams in flight at its delete.
describeStreamCases('gateway-scale-down-sse', 2, {
  system: 'nginx',
  profile: 'nginx-naive',
  fault: /eof \(body cut short\)/,
  how: 'the fast shutdown of each pod scaled in cuts its event streams short',
}, { scaleAtMs: 0 });
