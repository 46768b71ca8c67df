import { describe, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { runCase } from '../helpers/run-case.ts';
import { expectCarried, expectCutOnGateway } from './gateway-stream-cases.ts';

const SCENARIO = 'gateway-delete-sse';

describe(SCENARIO, () => {
  it('passes against the reference gateway: an event stream is a request in flight, kept through the drain to its end', async () => {
    expectCarried(await runCase(SCENARIO, 'reference'));
  });

  describe.skipIf(!onPath('haproxy'))('haproxy', () => {
    it('haproxy (drain-correct) passes', async () => {
      expectCarried(await runCase(SCENARIO, 'haproxy'));
    });

    it('haproxy-naive fails: its hard stop cuts every event stream short, placed on the gateway pod', async () => {
      expectCutOnGateway(await runCase(SCENARIO, 'haproxy-naive'), /eof \(body cut short\)/);
    });
  });

  describe.skipIf(!onPath('caddy'))('caddy', () => {
    it('caddy (drain-correct) passes: its graceful stop waits for event streams, unlike WebSockets', async () => {
      expectCarried(await runCase(SCENARIO, 'caddy'));
    });
  });
});
