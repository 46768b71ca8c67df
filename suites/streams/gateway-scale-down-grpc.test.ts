import { describe, it } from 'vitest';
import { expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectCarried, expectCut } from './gateway-grpc-cases.ts';

const SCENARIO = 'gateway-scale-down-grpc';

describe(SCENARIO, () => {
  it('passes against the reference gateway: each pod scaled in says GOAWAY and carries every call and stream to its end', async () => {
    expectCarried(await runCase(SCENARIO, 'reference'));
  });

  it('fails against a gateway that closes its HTTP/2 connections without GOAWAY: the streams on them are cut', async () => {
    const r = await runCase(SCENARIO, 'mutant-gateway-no-goaway');
    expectCut(r);
    expectFailedBy(r, 'http2Goaway');
  });
});
