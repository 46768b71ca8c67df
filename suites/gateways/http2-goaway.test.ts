import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectDrainCorrect } from './gateway-cases.ts';

describe('gateway-http2-goaway', () => {
  it('passes against the reference gateway: GOAWAY received, no stream failed, clients moved to another replica', async () => {
    const r = await runCase('gateway-http2-goaway', 'reference');
    expectDrainCorrect(r);
    const goaway = r.assertions.find((a) => a.name === 'http2Goaway');
    expect(goaway?.message, describeResult(r)).toMatch(/GOAWAY from gateway-1 .*the client moved on: \d+ later streams served by gateway-/);
    expect(r.timeline?.events.some((e) => e.kind === 'goaway' && e.pod === 'gateway-1')).toBe(true);
  });

  it('fails against a gateway that closes its HTTP/2 connections without GOAWAY: its streams fail', async () => {
    const r = await runCase('gateway-http2-goaway', 'mutant-gateway-no-goaway');
    expectFailedBy(r, 'noFailedRequests', 'http2Goaway');
    expect(r.assertions.find((a) => a.name === 'noFailedRequests')?.message).toMatch(/requests failed \(\d+ (reset|eof)/);
  });
});
