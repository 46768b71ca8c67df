// The TURN client against a real coturn process on a loopback address: allocation with long-term
// credentials, permissions, Send/Data indications, a channel with ChannelData, Refresh and delete.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TURN_PASSWORD, TURN_USER } from '../../profiles/coturn.ts';
import { onPath } from '../../profiles/requirements.ts';
import { AddressPool } from '../../providers/local/addresses.ts';
import { TurnClient, TurnError } from './client.ts';
import type { TransportAddress } from './stun.ts';
import { startCoturn, startUdpEcho, type Coturn } from '../../../test-support/turn.ts';

const hasCoturn = onPath('turnserver');

describe.skipIf(!hasCoturn)('TurnClient against coturn', () => {
  let pool: AddressPool;
  let coturn: Coturn;
  let echo: Awaited<ReturnType<typeof startUdpEcho>>;
  let clientIp: string;
  const open: TurnClient[] = [];

  beforeAll(async () => {
    pool = await AddressPool.create();
    coturn = await startCoturn(pool.allocate());
    echo = await startUdpEcho(pool.allocate());
    clientIp = pool.allocate();
  });

  afterAll(async () => {
    for (const c of open) c.destroy();
    echo?.close();
    await coturn?.stop();
    pool?.close();
  });

  const client = async (password = TURN_PASSWORD) => {
    const c = await TurnClient.open({ server: coturn.address, username: TURN_USER, password, localAddress: clientIp, requestTimeoutMs: 1000 });
    open.push(c);
    return c;
  };

  const nextData = (c: TurnClient) =>
    new Promise<{ data: string; peer: TransportAddress; via: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no relayed data within 1 s')), 1000);
      c.onData((data, peer, via) => {
        clearTimeout(timer);
        resolve({ data: data.toString(), peer, via });
      });
    });

  it('allocates with long-term credentials and relays both ways through indications and a channel', async () => {
    const c = await client();
    const allocation = await c.allocate(60);
    expect(allocation.relayed.address).toBe(coturn.address.address);
    expect(allocation.mapped).toEqual({ address: clientIp, port: c.localPort });
    // coturn never grants less than its default lifetime (600 s): asking for 60 gets at least 60.
    expect(allocation.lifetimeSeconds).toBeGreaterThanOrEqual(60);

    await c.createPermission([echo.address]);
    const viaIndication = nextData(c);
    c.send(echo.address, Buffer.from('seq-1'));
    expect(await viaIndication).toEqual({ data: 'seq-1', peer: echo.address, via: 'indication' });

    await c.channelBind(0x4000, echo.address);
    const viaChannel = nextData(c);
    c.sendChannel(0x4000, Buffer.from('seq-2'));
    expect(await viaChannel).toEqual({ data: 'seq-2', peer: echo.address, via: 'channel' });

    expect(await c.refresh(30)).toBeGreaterThanOrEqual(30);
    await c.close();
    expect(c.allocation).toBeUndefined();
  });

  it('fails an allocation with a wrong password with 401', async () => {
    const c = await client('not-the-password');
    await expect(c.allocate()).rejects.toMatchObject({ code: 401 });
  });

  it('refuses to relay to a peer without a permission', async () => {
    const c = await client();
    await c.allocate(60);
    let got = false;
    c.onData(() => (got = true));
    c.send(echo.address, Buffer.from('no permission'));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toBe(false);
    await c.close();
  });

  it('times out, without retrying, when the server is gone', async () => {
    const gone = await TurnClient.open({ server: { address: clientIp, port: 9 }, username: TURN_USER, password: TURN_PASSWORD, localAddress: clientIp, requestTimeoutMs: 200 });
    open.push(gone);
    const err = await gone.allocate().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TurnError);
    expect((err as TurnError).code).toBe('ZERODROP_TIMEOUT');
  });
});
