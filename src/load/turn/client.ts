// A TURN client over UDP, the subset of RFC 8656 a relay's drain is measured with: Allocate with
// long-term credentials (RFC 8489 §9.2), Refresh, CreatePermission, ChannelBind, Send and Data
// indications, and ChannelData. One client is one allocation on one UDP socket.
//
// No retries in the measuring path, by rule: a request is sent once and either answered or timed
// out (`TurnError` with code ZERODROP_TIMEOUT). RFC 8489 §6.2.1 retransmits requests over UDP; on
// loopback a datagram is not lost unless the server is gone, which is exactly what is measured.
// The only request sent twice is the one the server asks for: the 401 challenge that hands out the
// realm and nonce, and a 438 Stale Nonce that hands out a fresh one (RFC 8489 §9.2.4), both part
// of authenticating, not a recovery from a lost packet.

import { sourceAddressFor } from '../source-address.ts';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import {
  Attr,
  channelNumberValue,
  decodeChannelData,
  decodeErrorCode,
  decodeMessage,
  decodeXorAddress,
  encodeChannelData,
  encodeMessage,
  encodeXorAddress,
  getAttr,
  isChannelData,
  isStunMessage,
  longTermKey,
  MAX_CHANNEL,
  Method,
  MIN_CHANNEL,
  REQUESTED_TRANSPORT_UDP,
  u32,
  type StunAttribute,
  type StunMessage,
  type TransportAddress,
} from './stun.ts';

export interface TurnClientOptions {
  server: TransportAddress;
  username: string;
  password: string;
  /** Local address to bind the client's socket to (default: the one the kernel picks for the server's address). */
  localAddress?: string;
  /** How long a request waits for its response. */
  requestTimeoutMs?: number;
}

export interface Allocation {
  relayed: TransportAddress;
  mapped?: TransportAddress;
  lifetimeSeconds: number;
}

/** How a relayed datagram reached the client. */
export type DataVia = 'channel' | 'indication';

export type DataHandler = (data: Buffer, peer: TransportAddress, via: DataVia) => void;

/** A failed TURN transaction: an error response (`code` is the STUN error code) or a timeout. */
export class TurnError extends Error {
  readonly code: number | 'ZERODROP_TIMEOUT' | 'ZERODROP_CLOSED';
  constructor(code: TurnError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

interface Pending {
  resolve: (msg: StunMessage) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 2_000;

export class TurnClient {
  readonly socket: dgram.Socket;
  private readonly opts: TurnClientOptions;
  private readonly pending = new Map<string, Pending>();
  private readonly channels = new Map<number, TransportAddress>();
  private realm: string | undefined;
  private nonce: string | undefined;
  private key: Buffer | undefined;
  private closed = false;
  private handler: DataHandler | undefined;
  allocation: Allocation | undefined;
  /** First socket error, if any (ICMP unreachable surfaces as ECONNREFUSED on a connected socket). */
  socketError: Error | undefined;

  private constructor(socket: dgram.Socket, opts: TurnClientOptions) {
    this.socket = socket;
    this.opts = opts;
    socket.on('message', (buf) => this.onMessage(buf));
    socket.on('error', (err) => {
      this.socketError ??= err;
    });
  }

  /** Opens a UDP socket connected to the server. */
  static async open(opts: TurnClientOptions): Promise<TurnClient> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address: opts.localAddress ?? sourceAddressFor(opts.server.address), port: 0 }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(opts.server.port, opts.server.address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return new TurnClient(socket, opts);
  }

  get localPort(): number {
    return this.socket.address().port;
  }

  onData(handler: DataHandler): void {
    this.handler = handler;
  }

  /** A Binding request (RFC 8489 §3): the server's reflexive address of this socket; needs no credentials. */
  async binding(): Promise<TransportAddress | undefined> {
    const res = await this.request(Method.Binding, () => []);
    const mapped = getAttr(res, Attr.XorMappedAddress);
    return mapped ? decodeXorAddress(mapped, res.transactionId) : undefined;
  }

  /** Allocate (RFC 8656 §7.1): the first attempt collects the realm and nonce from the 401. */
  async allocate(lifetimeSeconds?: number): Promise<Allocation> {
    const attrs: StunAttribute[] = [{ type: Attr.RequestedTransport, value: REQUESTED_TRANSPORT_UDP }];
    if (lifetimeSeconds !== undefined) attrs.push({ type: Attr.Lifetime, value: u32(lifetimeSeconds) });
    const res = await this.request(Method.Allocate, () => attrs);
    const relayedValue = getAttr(res, Attr.XorRelayedAddress);
    if (!relayedValue) throw new TurnError(500, 'Allocate success without XOR-RELAYED-ADDRESS');
    const mappedValue = getAttr(res, Attr.XorMappedAddress);
    const allocation: Allocation = {
      relayed: decodeXorAddress(relayedValue, res.transactionId),
      lifetimeSeconds: getAttr(res, Attr.Lifetime)?.readUInt32BE(0) ?? 600,
      ...(mappedValue ? { mapped: decodeXorAddress(mappedValue, res.transactionId) } : {}),
    };
    this.allocation = allocation;
    return allocation;
  }

  /** Refresh (RFC 8656 §7.2); lifetime 0 deletes the allocation. Returns the granted lifetime. */
  async refresh(lifetimeSeconds: number): Promise<number> {
    const res = await this.request(Method.Refresh, () => [{ type: Attr.Lifetime, value: u32(lifetimeSeconds) }]);
    return getAttr(res, Attr.Lifetime)?.readUInt32BE(0) ?? lifetimeSeconds;
  }

  /** CreatePermission (RFC 8656 §9) for the peers' IP addresses. */
  async createPermission(peers: TransportAddress[]): Promise<void> {
    await this.request(Method.CreatePermission, (tid) => peers.map((p) => ({ type: Attr.XorPeerAddress, value: encodeXorAddress(p, tid) })));
  }

  /** ChannelBind (RFC 8656 §12.1); also installs a permission for the peer. */
  async channelBind(channel: number, peer: TransportAddress): Promise<void> {
    if (!Number.isInteger(channel) || channel < MIN_CHANNEL || channel > MAX_CHANNEL) {
      throw new RangeError(`channel number must be in [0x4000, 0x4fff], got ${channel}`);
    }
    await this.request(Method.ChannelBind, (tid) => [
      { type: Attr.ChannelNumber, value: channelNumberValue(channel) },
      { type: Attr.XorPeerAddress, value: encodeXorAddress(peer, tid) },
    ]);
    this.channels.set(channel, peer);
  }

  /** A Send indication (RFC 8656 §10.1): no response, no integrity. */
  send(peer: TransportAddress, data: Buffer): void {
    const tid = randomBytes(12);
    const msg = encodeMessage({
      method: Method.Send,
      cls: 'indication',
      transactionId: tid,
      attributes: [
        { type: Attr.XorPeerAddress, value: encodeXorAddress(peer, tid) },
        { type: Attr.Data, value: data },
      ],
    });
    this.socket.send(msg);
  }

  /** ChannelData to a bound channel (RFC 8656 §12.4). */
  sendChannel(channel: number, data: Buffer): void {
    this.socket.send(encodeChannelData(channel, data));
  }

  /** Deletes the allocation (Refresh 0) when there is one and the server answers, then closes the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.allocation) {
      try {
        await this.refresh(0);
      } catch {
        // The server may be gone: the allocation dies with it.
      }
      this.allocation = undefined;
    }
    this.destroy();
  }

  /** Closes the socket at once; pending requests fail. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new TurnError('ZERODROP_CLOSED', 'client closed'));
      this.pending.delete(id);
    }
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }

  /** `attributes` builds the request's attributes for a transaction id (the XOR addresses depend on it). */
  private async request(method: number, attributes: (tid: Buffer) => StunAttribute[]): Promise<StunMessage> {
    let res = await this.transact(method, attributes);
    // The server's challenges (401 with a realm and nonce, 438 with a fresh nonce) are answered once.
    if (res.cls === 'error') {
      const code = errorOf(res).code;
      if (code === 401 || code === 438) {
        const realm = getAttr(res, Attr.Realm)?.toString('utf8');
        const nonce = getAttr(res, Attr.Nonce)?.toString('utf8');
        if (nonce !== undefined && (realm !== undefined || this.realm !== undefined)) {
          const hadCredentials = this.key !== undefined;
          this.nonce = nonce;
          if (realm !== undefined && realm !== this.realm) {
            this.realm = realm;
            this.key = longTermKey(this.opts.username, realm, this.opts.password);
          }
          // A 401 to a request that already carried credentials means they were rejected.
          if (!(code === 401 && hadCredentials)) res = await this.transact(method, attributes);
        }
      }
    }
    if (res.cls === 'error') {
      const { code, reason } = errorOf(res);
      throw new TurnError(code, `${methodName(method)} failed: ${code} ${reason}`);
    }
    return res;
  }

  private transact(method: number, attributes: (tid: Buffer) => StunAttribute[]): Promise<StunMessage> {
    if (this.closed) return Promise.reject(new TurnError('ZERODROP_CLOSED', 'client closed'));
    const id = randomBytes(12);
    const attrs = attributes(id);
    if (this.key && this.realm !== undefined && this.nonce !== undefined) {
      attrs.push(
        { type: Attr.Username, value: Buffer.from(this.opts.username, 'utf8') },
        { type: Attr.Realm, value: Buffer.from(this.realm, 'utf8') },
        { type: Attr.Nonce, value: Buffer.from(this.nonce, 'utf8') },
      );
    }
    const bytes = encodeMessage(
      { method, cls: 'request', transactionId: id, attributes: attrs },
      this.key ? { integrityKey: this.key, fingerprint: true } : { fingerprint: true },
    );
    const timeoutMs = this.opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const key = id.toString('hex');
      const timer = setTimeout(() => {
        this.pending.delete(key);
        const cause = this.socketError ? ` (socket: ${this.socketError.message})` : '';
        reject(new TurnError('ZERODROP_TIMEOUT', `${methodName(method)}: no response within ${timeoutMs} ms${cause}`));
      }, timeoutMs);
      this.pending.set(key, { resolve, reject, timer });
      this.socket.send(bytes, (err) => {
        if (!err) return;
        clearTimeout(timer);
        this.pending.delete(key);
        reject(err);
      });
    });
  }

  private onMessage(buf: Buffer): void {
    if (isChannelData(buf)) {
      let frame;
      try {
        frame = decodeChannelData(buf);
      } catch {
        return;
      }
      const peer = this.channels.get(frame.channel);
      if (peer) this.handler?.(frame.data, peer, 'channel');
      return;
    }
    if (!isStunMessage(buf)) return;
    let msg: StunMessage;
    try {
      msg = decodeMessage(buf);
    } catch {
      return;
    }
    if (msg.cls === 'indication') {
      if (msg.method !== Method.Data) return;
      const peerValue = getAttr(msg, Attr.XorPeerAddress);
      const data = getAttr(msg, Attr.Data);
      if (peerValue && data) this.handler?.(data, decodeXorAddress(peerValue, msg.transactionId), 'indication');
      return;
    }
    const key = msg.transactionId.toString('hex');
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    clearTimeout(pending.timer);
    pending.resolve(msg);
  }
}

function errorOf(msg: StunMessage): { code: number; reason: string } {
  const value = getAttr(msg, Attr.ErrorCode);
  return value ? decodeErrorCode(value) : { code: 0, reason: 'error response without ERROR-CODE' };
}

function methodName(method: number): string {
  return Object.entries(Method).find(([, m]) => m === method)?.[0] ?? `method 0x${method.toString(16)}`;
}
