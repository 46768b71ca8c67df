import { describeStreamCases } from './gateway-stream-cases.ts';

// Both old gateway pods are replaced, each with event streams in flight at its delete.
describeStreamCases('gateway-rollout-sse', 2, {
  system: 'haproxy',
  profile: 'haproxy-naive',
  fault: /eof \(body cut short\)/,
  how: 'the hard stop of each replaced pod cuts its event streams short',
}, { rolloutAtMs: 0 });
