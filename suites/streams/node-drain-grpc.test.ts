// node-drain-grpc on the local provider's modelled nodes, as node-drain-http
// (suites/scenarios/node-drain-http.test.ts), with gRPC calls and streams for the load.

import { describe, it } from 'vitest';
import { expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectGoaway, expectGrpcCut } from './backend-stream-cases.ts';

describe('node-drain-grpc', () => {
  it('passes with the budget: both evicted pods say GOAWAY, every unary call succeeds and every stream completes', async () => {
    expectGoaway(await runCase('node-drain-grpc', 'reference'), 2);
  });

  it('fails against a backend that exits at SIGTERM: each evicted pod cuts its calls and streams without GOAWAY', async () => {
    // The slow start is what the budget is tested against, not the mutant: a quick one keeps the case short.
    expectGrpcCut(await runCase('node-drain-grpc', 'mutant-exit-on-sigterm', { startupSeconds: 1 }));
  });

  it('fails with a single replica and no budget: the one pod serves new calls until it is killed, then nothing is ready', async () => {
    expectFailedBy(await runCase('node-drain-grpc', 'reference', { replicas: 1, minAvailable: 0 }), 'noFailedRequests', 'notKilled');
  });
});
