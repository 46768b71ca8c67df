import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectGoaway, expectGrpcCut, message } from './backend-stream-cases.ts';

describe('backend-delete-grpc', () => {
  it('passes against the reference gRPC server: GOAWAY, every unary call OK, every stream complete or ended with OK by the draining pod', async () => {
    const r = await runCase('backend-delete-grpc', 'reference');
    expectGoaway(r, 1);
    // Both ways a stream may end on a draining pod happened: to its last message, and early with OK.
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/every message in sequence; \d+ streams? (was|were) open on backend-\d+ when it was deleted \([1-9]\d* ran to their end\); \d+ streams? (was|were) ended early by the draining pod/);
  });

  it('fails against a backend that exits at SIGTERM: its calls and streams are cut without GOAWAY', async () => {
    expectGrpcCut(await runCase('backend-delete-grpc', 'mutant-exit-on-sigterm'));
  });

  it('fails against a backend that hangs until SIGKILL: its streams are cut at the kill', async () => {
    const r = await runCase('backend-delete-grpc', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'grpcStreamsComplete', 'notKilled');
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/SIGKILL of backend-/);
  });
});
