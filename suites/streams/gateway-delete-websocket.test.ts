import { describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

const SCENARIO = 'gateway-delete-websocket';

function intact(r: ScenarioResult): string | undefined {
  return r.assertions.find((a) => a.name === 'streamsIntact')?.message;
}

/** Passed, with every stream named by the gateway pod it went through and the backend behind it. */
function expectCarried(r: ScenarioResult): void {
  expectPass(r);
  expect(intact(r), describeResult(r)).toMatch(/streams were open on a deleted pod .*: each ran to its end/);
  const streams = r.timeline?.streams ?? [];
  expect(streams.length, describeResult(r)).toBeGreaterThan(8);
  for (const s of streams) {
    expect(s.gateway, `stream ${s.stream} names no gateway pod`).toMatch(/^gateway-\d+$/);
    expect(s.pod, `stream ${s.stream} names no backend pod`).toMatch(/^backend-\d+$/);
  }
}

/** Failed by streamsIntact with the cut placed on the deleted gateway pod's shutdown. */
function expectCut(r: ScenarioResult, fault: RegExp): void {
  expectFailedBy(r, 'streamsIntact');
  expect(intact(r), describeResult(r)).toMatch(fault);
  expect(intact(r), describeResult(r)).toMatch(/first: stream \d+ through gateway-\d+ \(backend backend-\d+\) .* phase "after (SIGTERM|exit) of gateway-\d+/);
}

describe(SCENARIO, () => {
  it('passes against the reference gateway: it tunnels each WebSocket and keeps it through its drain to the stream\'s end', async () => {
    expectCarried(await runCase(SCENARIO, 'reference'));
  });

  describe.skipIf(!onPath('nginx'))('nginx', () => {
    it('nginx (drain-correct) passes: its graceful shutdown keeps upgraded connections until they end', async () => {
      expectCarried(await runCase(SCENARIO, 'nginx'));
    });

    it('nginx-naive fails: its fast shutdown at SIGTERM cuts every WebSocket without a close frame', async () => {
      expectCut(await runCase(SCENARIO, 'nginx-naive'), /close 1006/);
    });
  });

  describe.skipIf(!onPath('haproxy'))('haproxy', () => {
    it('haproxy (drain-correct) passes: its soft-stop keeps established tunnels until they end', async () => {
      expectCarried(await runCase(SCENARIO, 'haproxy'));
    });

    it('haproxy-naive fails: its hard stop at SIGTERM cuts every WebSocket without a close frame', async () => {
      expectCut(await runCase(SCENARIO, 'haproxy-naive'), /close 1006/);
    });
  });

  describe.skipIf(!onPath('caddy'))('caddy', () => {
    it('caddy (drain-correct) fails, a known failure: its stop closes every WebSocket with 1001 before the stream ends', async () => {
      expectCut(await runCase(SCENARIO, 'caddy'), /close 1001 before its end/);
    });

    it('caddy-naive fails: its stop at once, before the load balancer has deprogrammed it', async () => {
      const r = await runCase(SCENARIO, 'caddy-naive');
      expectFailedBy(r, 'streamsIntact', 'drainTiming');
    });
  });
});
