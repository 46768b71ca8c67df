import { describeStreamCases } from './gateway-stream-cases.ts';

// Both old gateway pods are replaced, each with WebSockets in flight at its delete.
describeStreamCases('gateway-rollout-websocket', 2, {
  system: 'nginx',
  profile: 'nginx-naive',
  fault: /close 1006/,
  how: 'the fast shutdown of each replaced pod cuts its WebSockets without a close frame',
}, { rolloutAtMs: 0 });
