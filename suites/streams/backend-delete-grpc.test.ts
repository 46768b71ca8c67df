import { describe, expect, it } from 'vitest';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

const message = (r: Awaited<ReturnType<typeof runCase>>, name: string) => r.assertions.find((a) => a.name === name)?.message;

describe('backend-delete-grpc', () => {
  it('passes against the reference gRPC server: GOAWAY, every unary call OK, every stream complete or ended with OK by the draining pod', async () => {
    const r = await runCase('backend-delete-grpc', 'reference');
    expectPass(r);
    // Both ways a stream may end on a draining pod happened: to its last message, and early with OK.
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/every message in sequence; \d+ streams? (was|were) open on backend-\d+ when it was deleted \([1-9]\d* ran to their end\); \d+ streams? (was|were) ended early by the draining pod/);
    expect(message(r, 'http2Goaway'), describeResult(r)).toMatch(/GOAWAY from backend-.*served by backend-/);
  });

  it('fails against a backend that exits at SIGTERM: its calls and streams are cut without GOAWAY', async () => {
    const r = await runCase('backend-delete-grpc', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'grpcStreamsComplete', 'http2Goaway');
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/UNAVAILABLE|INTERNAL/);
  });

  it('fails against a backend that hangs until SIGKILL: its streams are cut at the kill', async () => {
    const r = await runCase('backend-delete-grpc', 'mutant-hang-until-killed', { graceSeconds: 3 });
    expectFailedBy(r, 'grpcStreamsComplete', 'notKilled');
    expect(message(r, 'grpcStreamsComplete'), describeResult(r)).toMatch(/SIGKILL of backend-/);
  });
});
