import { describe, expect, it } from 'vitest';
import { describeResult, runCase } from '../helpers/run-case.ts';
import { expectGoaway, expectGrpcCut, message } from './backend-stream-cases.ts';

describe('backend-rollout-grpc', () => {
  it('passes against the reference gRPC server: both old pods say GOAWAY and end their streams with OK, every unary call succeeds', async () => {
    const r = await runCase('backend-rollout-grpc', 'reference');
    expectGoaway(r, 2);
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/ended early by the draining pod with OK/);
  });

  it('fails against a backend that exits at SIGTERM: each old pod cuts its calls and streams without GOAWAY', async () => {
    expectGrpcCut(await runCase('backend-rollout-grpc', 'mutant-exit-on-sigterm'));
  });
});
