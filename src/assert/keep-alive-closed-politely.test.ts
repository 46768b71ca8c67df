import { describe, expect, it } from 'vitest';
import { drainScenario, evaluateOne } from '../../test-support/assert.ts';

const expectation = { assert: 'keepAliveClosedPolitely', idleTimeoutMs: 1000 } as const;

describe('keepAliveClosedPolitely', () => {
  it('passes a drain whose keep-alive connections all left after Connection: close', () => {
    expect(evaluateOne(expectation, drainScenario('correct').build())).toMatchObject({
      verdict: 'pass',
      message: 'no keep-alive connection was closed between two requests without Connection: close',
    });
  });

  it('fails a gateway that closes idle keep-alive connections at its stop signal (the keep-alive race mutant), counting each', () => {
    const b = drainScenario('correct');
    for (let i = 0; i < 12; i++) b.event(2001 + i, 'unannounced-close', { pod: 'backend-2', detail: { load: 'http', localPort: 40_000 + i, idleMs: 40, how: 'fin' } });
    const result = evaluateOne(expectation, b.build());
    expect(result).toMatchObject({ verdict: 'fail', details: { unannounced: 12, timeouts: 0 } });
    expect(result.message).toMatch(/^12 keep-alive connections closed by the server between two requests without Connection: close, each a race with the client's next request \(12 backend-2: after SIGTERM of backend-2/);
    expect(result.message).toContain('first at t=2.001 s');
  });

  it('lets a close after the connection idled past the keep-alive timeout through, and says so', () => {
    const b = drainScenario('correct');
    b.event(2500, 'unannounced-close', { pod: 'backend-2', detail: { load: 'http', localPort: 40_000, idleMs: 1000, how: 'fin' } });
    expect(evaluateOne(expectation, b.build())).toMatchObject({
      verdict: 'pass',
      message: 'no keep-alive connection was closed between two requests without Connection: close; 1 connection closed after 1000 ms idle or more (a keep-alive timeout)',
    });
  });
});
