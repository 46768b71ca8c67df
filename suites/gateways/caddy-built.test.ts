// Caddy built from its Go module (caddy-built, caddy/go.mod's pin) on gateway-delete-websocket, the
// scenario Debian's Caddy 2.6 fails: drain-correct it carries every WebSocket to its end, and each of
// its two stream settings is shown necessary by its ablation, each cut its own way. Skipped, with
// the command that builds it, where it is not built: a run never builds it (about 6 minutes cold).

import { describe, expect, it } from 'vitest';
import { caddyModule } from '../../src/profiles/caddy-binary.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { describeResult, expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectCarried, expectCutOnGateway, streamsIntactMessage } from '../streams/gateway-stream-cases.ts';

const SCENARIO = 'gateway-delete-websocket';
const unbuilt = (await isBuilt(caddyModule())) ? undefined : `Caddy ${caddyModule().pin} is not built here (npm run caddy:build)`;

describe.skipIf(unbuilt !== undefined)(`caddy-built on ${SCENARIO}${unbuilt ? ` (${unbuilt})` : ''}`, () => {
  it('caddy-built passes: its preStop unloads the configuration, and stream_close_delay keeps the streams open in the live process until they end', async () => {
    expectCarried(await runCase(SCENARIO, 'caddy-built'));
  });

  it('without stream_close_delay it fails: the unload closes every WebSocket with 1001 during the preStop', async () => {
    const r = await runCase(SCENARIO, 'caddy-built-without-stream_close_delay');
    expectFailedBy(r, 'streamsIntact');
    expect(streamsIntactMessage(r), describeResult(r)).toMatch(/close 1001 before its end .* phase "terminating \(preStop\) of gateway-\d+/);
  });

  it('without the unload in its preStop it fails: SIGTERM exits once the requests are done, and the streams die with the process (1006)', async () => {
    const r = await runCase(SCENARIO, 'caddy-built-without-prestop-unload');
    expectCutOnGateway(r, /close 1006/);
    // Not "after exit" alone: Linux closes an exiting process's sockets before its parent can learn
    // of the exit, so a stream the exit cut may be seen ending a few milliseconds before the exit is
    // recorded. expectCutOnGateway places the cut after SIGTERM or after exit, never earlier.
  });
});
