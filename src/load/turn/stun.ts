// STUN message codec (RFC 8489) with the TURN methods and attributes (RFC 8656) the harness uses.
// Written here rather than taken from npm: the maintained STUN packages either ship their own
// sockets and agents (ICE stacks) or stop at Binding; the harness needs only bytes in and out, and
// every byte is checked against the RFC 5769 test vectors in stun.test.ts.
//
// Scope: the message header, attribute TLVs with 4-byte padding, MESSAGE-INTEGRITY (HMAC-SHA1),
// FINGERPRINT (CRC-32), the XOR address attributes, ERROR-CODE, the long-term credential key, and
// ChannelData framing (RFC 8656 §12.4). Not here: MESSAGE-INTEGRITY-SHA256, USERHASH,
// PASSWORD-ALGORITHMS (RFC 8489 §9.2 bis), which coturn does not require.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { crc32 } from 'node:zlib';

export const MAGIC_COOKIE = 0x2112a442;
const HEADER_BYTES = 20;
const FINGERPRINT_XOR = 0x5354554e;

/** STUN/TURN methods (RFC 8489 §18.2, RFC 8656 §17). */
export const Method = {
  Binding: 0x001,
  Allocate: 0x003,
  Refresh: 0x004,
  Send: 0x006,
  Data: 0x007,
  CreatePermission: 0x008,
  ChannelBind: 0x009,
} as const;

export type StunClass = 'request' | 'indication' | 'success' | 'error';

/** Attribute types (RFC 8489 §18.3, RFC 8656 §18). */
export const Attr = {
  MappedAddress: 0x0001,
  Username: 0x0006,
  MessageIntegrity: 0x0008,
  ErrorCode: 0x0009,
  UnknownAttributes: 0x000a,
  ChannelNumber: 0x000c,
  Lifetime: 0x000d,
  XorPeerAddress: 0x0012,
  Data: 0x0013,
  Realm: 0x0014,
  Nonce: 0x0015,
  XorRelayedAddress: 0x0016,
  RequestedTransport: 0x0019,
  XorMappedAddress: 0x0020,
  Software: 0x8022,
  Fingerprint: 0x8028,
} as const;

export interface StunAttribute {
  type: number;
  value: Buffer;
}

export interface StunMessage {
  method: number;
  cls: StunClass;
  /** 12 bytes. */
  transactionId: Buffer;
  attributes: StunAttribute[];
}

export interface TransportAddress {
  address: string;
  port: number;
}

export class StunDecodeError extends Error {}

const CLASS_BITS: Record<StunClass, number> = { request: 0x000, indication: 0x010, success: 0x100, error: 0x110 };

/** The 14-bit message type: method bits interleaved with the two class bits (RFC 8489 §5). */
export function messageType(method: number, cls: StunClass): number {
  return (method & 0x000f) | ((method & 0x0070) << 1) | ((method & 0x0f80) << 2) | CLASS_BITS[cls];
}

function splitType(type: number): { method: number; cls: StunClass } {
  const method = (type & 0x000f) | ((type & 0x00e0) >> 1) | ((type & 0x3e00) >> 2);
  const bits = type & 0x0110;
  const cls = (Object.keys(CLASS_BITS) as StunClass[]).find((c) => CLASS_BITS[c] === bits) ?? 'request';
  return { method, cls };
}

export interface EncodeOptions {
  /** Adds MESSAGE-INTEGRITY keyed with this (short-term: the password; long-term: longTermKey()). */
  integrityKey?: Buffer;
  fingerprint?: boolean;
  /** Padding byte; RFC 8489 says zero, RFC 5769's vectors pad with spaces (0x20). */
  pad?: number;
}

/** Encodes a message, appending MESSAGE-INTEGRITY and FINGERPRINT when asked (in that order). */
export function encodeMessage(msg: StunMessage, opts: EncodeOptions = {}): Buffer {
  if (msg.transactionId.length !== 12) throw new RangeError('transaction id must be 12 bytes');
  const pad = opts.pad ?? 0;
  const parts: Buffer[] = [];
  for (const a of msg.attributes) parts.push(attributeBytes(a.type, a.value, pad));
  let body = Buffer.concat(parts);
  const header = (extra: number) => {
    const h = Buffer.alloc(HEADER_BYTES);
    h.writeUInt16BE(messageType(msg.method, msg.cls), 0);
    h.writeUInt16BE(body.length + extra, 2);
    h.writeUInt32BE(MAGIC_COOKIE, 4);
    msg.transactionId.copy(h, 8);
    return h;
  };
  if (opts.integrityKey) {
    // The HMAC covers the message up to the attribute, with the length already counting it (§14.5).
    const mac = createHmac('sha1', opts.integrityKey).update(Buffer.concat([header(24), body])).digest();
    body = Buffer.concat([body, attributeBytes(Attr.MessageIntegrity, mac, pad)]);
  }
  if (opts.fingerprint) {
    const crc = (crc32(Buffer.concat([header(8), body])) ^ FINGERPRINT_XOR) >>> 0;
    const value = Buffer.alloc(4);
    value.writeUInt32BE(crc, 0);
    body = Buffer.concat([body, attributeBytes(Attr.Fingerprint, value, pad)]);
  }
  return Buffer.concat([header(0), body]);
}

function attributeBytes(type: number, value: Buffer, pad: number): Buffer {
  const padded = Math.ceil(value.length / 4) * 4;
  const out = Buffer.alloc(4 + padded, pad);
  out.writeUInt16BE(type, 0);
  out.writeUInt16BE(value.length, 2);
  value.copy(out, 4);
  return out;
}

/** True when the datagram looks like a STUN message (top bits 00 and the magic cookie). */
export function isStunMessage(buf: Buffer): boolean {
  return buf.length >= HEADER_BYTES && (buf[0]! & 0xc0) === 0 && buf.readUInt32BE(4) === MAGIC_COOKIE;
}

export function decodeMessage(buf: Buffer): StunMessage {
  if (!isStunMessage(buf)) throw new StunDecodeError('not a STUN message');
  const length = buf.readUInt16BE(2);
  if (length % 4 !== 0 || HEADER_BYTES + length > buf.length) throw new StunDecodeError(`bad message length ${length}`);
  const { method, cls } = splitType(buf.readUInt16BE(0));
  const attributes: StunAttribute[] = [];
  let offset = HEADER_BYTES;
  const end = HEADER_BYTES + length;
  while (offset < end) {
    if (offset + 4 > end) throw new StunDecodeError('truncated attribute header');
    const type = buf.readUInt16BE(offset);
    const len = buf.readUInt16BE(offset + 2);
    if (offset + 4 + len > end) throw new StunDecodeError(`attribute 0x${type.toString(16)} overruns the message`);
    attributes.push({ type, value: Buffer.from(buf.subarray(offset + 4, offset + 4 + len)) });
    offset += 4 + Math.ceil(len / 4) * 4;
  }
  return { method, cls, transactionId: Buffer.from(buf.subarray(8, 20)), attributes };
}

export function getAttr(msg: StunMessage, type: number): Buffer | undefined {
  return msg.attributes.find((a) => a.type === type)?.value;
}

/** Byte offset of the first attribute of `type` in an encoded message, or -1. */
function attributeOffset(buf: Buffer, type: number): number {
  const end = HEADER_BYTES + buf.readUInt16BE(2);
  let offset = HEADER_BYTES;
  while (offset + 4 <= end) {
    if (buf.readUInt16BE(offset) === type) return offset;
    offset += 4 + Math.ceil(buf.readUInt16BE(offset + 2) / 4) * 4;
  }
  return -1;
}

/** Checks MESSAGE-INTEGRITY of an encoded message; false when it is absent or wrong. */
export function verifyIntegrity(buf: Buffer, key: Buffer): boolean {
  const at = attributeOffset(buf, Attr.MessageIntegrity);
  if (at < 0 || buf.readUInt16BE(at + 2) !== 20) return false;
  const covered = Buffer.from(buf.subarray(0, at));
  covered.writeUInt16BE(at + 24 - HEADER_BYTES, 2);
  const mac = createHmac('sha1', key).update(covered).digest();
  return timingSafeEqual(mac, buf.subarray(at + 4, at + 24));
}

/** Checks FINGERPRINT of an encoded message; false when it is absent or wrong. */
export function verifyFingerprint(buf: Buffer): boolean {
  const at = attributeOffset(buf, Attr.Fingerprint);
  if (at < 0) return false;
  const covered = Buffer.from(buf.subarray(0, at));
  covered.writeUInt16BE(at + 8 - HEADER_BYTES, 2);
  return ((crc32(covered) ^ FINGERPRINT_XOR) >>> 0) === buf.readUInt32BE(at + 4);
}

/**
 * SASLprep (RFC 4013) as far as passwords in practice need it: characters "commonly mapped to
 * nothing" removed, non-ASCII spaces mapped to SPACE, then NFKC. Prohibited-output and bidi checks
 * are not done: the harness only prepares its own configured passwords.
 */
export function saslprep(s: string): string {
  let mapped = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (MAPPED_TO_NOTHING.has(cp) || (cp >= 0xfe00 && cp <= 0xfe0f)) continue;
    mapped += NON_ASCII_SPACES.has(cp) || (cp >= 0x2000 && cp <= 0x200a) ? ' ' : ch;
  }
  return mapped.normalize('NFKC');
}

/** RFC 3454 table B.1 (commonly mapped to nothing), without the variation selectors range. */
const MAPPED_TO_NOTHING = new Set([0x00ad, 0x034f, 0x1806, 0x180b, 0x180c, 0x180d, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]);
/** RFC 3454 table C.1.2 (non-ASCII spaces), without the 0x2000-0x200a range. */
const NON_ASCII_SPACES = new Set([0x00a0, 0x1680, 0x202f, 0x205f, 0x3000]);

/** The long-term credential key: MD5(username ":" realm ":" SASLprep(password)) (RFC 8489 §9.2.2). */
export function longTermKey(username: string, realm: string, password: string): Buffer {
  return createHash('md5').update(`${username}:${realm}:${saslprep(password)}`, 'utf8').digest();
}

/** XOR-MAPPED-ADDRESS, XOR-PEER-ADDRESS, XOR-RELAYED-ADDRESS value (RFC 8489 §14.2). */
export function encodeXorAddress(addr: TransportAddress, transactionId: Buffer): Buffer {
  const xport = addr.port ^ (MAGIC_COOKIE >>> 16);
  if (isIPv4(addr.address)) {
    const out = Buffer.alloc(8);
    out.writeUInt16BE(0x01, 0);
    out.writeUInt16BE(xport, 2);
    const octets = addr.address.split('.').map(Number);
    out.writeUInt32BE(((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0, 4);
    out.writeUInt32BE((out.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0, 4);
    return out;
  }
  if (!isIPv6(addr.address)) throw new RangeError(`not an IP address: ${addr.address}`);
  const out = Buffer.alloc(20);
  out.writeUInt16BE(0x02, 0);
  out.writeUInt16BE(xport, 2);
  ipv6Bytes(addr.address).copy(out, 4);
  const mask = xorMask(transactionId);
  for (let i = 0; i < 16; i++) out[4 + i] = out[4 + i]! ^ mask[i]!;
  return out;
}

export function decodeXorAddress(value: Buffer, transactionId: Buffer): TransportAddress {
  if (value.length < 8) throw new StunDecodeError('address attribute too short');
  const family = value.readUInt16BE(0) & 0xff;
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16);
  if (family === 0x01) {
    const ip = (value.readUInt32BE(4) ^ MAGIC_COOKIE) >>> 0;
    return { address: [ip >>> 24, (ip >>> 16) & 0xff, (ip >>> 8) & 0xff, ip & 0xff].join('.'), port };
  }
  if (family === 0x02 && value.length >= 20) {
    const mask = xorMask(transactionId);
    const bytes = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) bytes[i] = value[4 + i]! ^ mask[i]!;
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
    return { address: groups.join(':'), port };
  }
  throw new StunDecodeError(`unknown address family ${family}`);
}

function xorMask(transactionId: Buffer): Buffer {
  const mask = Buffer.alloc(16);
  mask.writeUInt32BE(MAGIC_COOKIE, 0);
  transactionId.copy(mask, 4);
  return mask;
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = parse(head);
  const t = address.includes('::') ? parse(tail) : [];
  const groups = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

export interface StunError {
  code: number;
  reason: string;
}

/** ERROR-CODE value (RFC 8489 §14.8). */
export function decodeErrorCode(value: Buffer): StunError {
  if (value.length < 4) throw new StunDecodeError('ERROR-CODE too short');
  return { code: (value[2]! & 0x07) * 100 + value[3]!, reason: value.subarray(4).toString('utf8') };
}

export function encodeErrorCode(err: StunError): Buffer {
  const reason = Buffer.from(err.reason, 'utf8');
  const out = Buffer.alloc(4 + reason.length);
  out[2] = Math.floor(err.code / 100);
  out[3] = err.code % 100;
  reason.copy(out, 4);
  return out;
}

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

/** REQUESTED-TRANSPORT for UDP: protocol number 17 then RFFU (RFC 8656 §18.7). */
export const REQUESTED_TRANSPORT_UDP = u32(17 << 24);

/** CHANNEL-NUMBER value: the number then RFFU (RFC 8656 §18.1). */
export function channelNumberValue(channel: number): Buffer {
  return u32(channel << 16);
}

/** Channel numbers a client may bind (RFC 8656 §12). */
export const MIN_CHANNEL = 0x4000;
export const MAX_CHANNEL = 0x4fff;

/** True when the datagram is ChannelData (first two bits 01, RFC 8656 §12.4). */
export function isChannelData(buf: Buffer): boolean {
  return buf.length >= 4 && (buf[0]! & 0xc0) === 0x40;
}

/** ChannelData framing; over UDP the padding to 4 bytes is optional and omitted. */
export function encodeChannelData(channel: number, data: Buffer): Buffer {
  const out = Buffer.alloc(4 + data.length);
  out.writeUInt16BE(channel, 0);
  out.writeUInt16BE(data.length, 2);
  data.copy(out, 4);
  return out;
}

export function decodeChannelData(buf: Buffer): { channel: number; data: Buffer } {
  if (!isChannelData(buf)) throw new StunDecodeError('not ChannelData');
  const length = buf.readUInt16BE(2);
  if (4 + length > buf.length) throw new StunDecodeError('ChannelData shorter than its length');
  return { channel: buf.readUInt16BE(0), data: Buffer.from(buf.subarray(4, 4 + length)) };
}
