import { describe, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectCarried, expectCutOnGateway } from './gateway-stream-cases.ts';

const SCENARIO = 'gateway-delete-websocket';

describe(SCENARIO, () => {
  it('passes against the reference gateway: it tunnels each WebSocket and keeps it through its drain to the stream\'s end', async () => {
    expectCarried(await runCase(SCENARIO, 'reference'));
  });

  describe.skipIf(!onPath('nginx'))('nginx', () => {
    it('nginx (drain-correct) passes: its graceful shutdown keeps upgraded connections until they end', async () => {
      expectCarried(await runCase(SCENARIO, 'nginx'));
    });

    it('nginx-naive fails: its fast shutdown at SIGTERM cuts every WebSocket without a close frame', async () => {
      expectCutOnGateway(await runCase(SCENARIO, 'nginx-naive'), /close 1006/);
    });
  });

  describe.skipIf(!onPath('haproxy'))('haproxy', () => {
    it('haproxy (drain-correct) passes: its soft-stop keeps established tunnels until they end', async () => {
      expectCarried(await runCase(SCENARIO, 'haproxy'));
    });

    it('haproxy-naive fails: its hard stop at SIGTERM cuts every WebSocket without a close frame', async () => {
      expectCutOnGateway(await runCase(SCENARIO, 'haproxy-naive'), /close 1006/);
    });
  });

  describe.skipIf(!onPath('caddy'))('caddy', () => {
    it('caddy (drain-correct) fails, a known failure: its stop closes every WebSocket with 1001 before the stream ends', async () => {
      expectCutOnGateway(await runCase(SCENARIO, 'caddy'), /close 1001 before its end/);
    });

    it('caddy-naive fails: its stop at once, before the load balancer has deprogrammed it', async () => {
      const r = await runCase(SCENARIO, 'caddy-naive');
      expectFailedBy(r, 'streamsIntact', 'drainTiming');
    });
  });
});
