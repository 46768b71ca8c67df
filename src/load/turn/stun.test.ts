// The STUN codec against the test vectors of RFC 5769 §2 (https://www.rfc-editor.org/rfc/rfc5769),
// decoded, verified (MESSAGE-INTEGRITY, FINGERPRINT) and re-encoded byte for byte.

import { describe, expect, it } from 'vitest';
import {
  Attr,
  decodeChannelData,
  decodeErrorCode,
  decodeMessage,
  decodeXorAddress,
  encodeChannelData,
  encodeErrorCode,
  encodeMessage,
  encodeXorAddress,
  getAttr,
  isChannelData,
  isStunMessage,
  longTermKey,
  messageType,
  Method,
  saslprep,
  verifyFingerprint,
  verifyIntegrity,
  type StunMessage,
} from './stun.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// §2.1 Sample Request: short-term credentials, SOFTWARE, PRIORITY, ICE-CONTROLLED, USERNAME,
// MESSAGE-INTEGRITY, FINGERPRINT; padding bytes are spaces.
const REQUEST = hex(`
  00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
  00 24 00 04 6e 00 01 ff
  80 29 00 08 93 2f f9 b1 51 26 3b 36
  00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
  00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
  80 28 00 04 e5 7a 3b cf`);
const SHORT_TERM_PASSWORD = Buffer.from('VOkJxbRl1RmTxUk/WvJxBt');

// §2.2 Sample IPv4 Response: XOR-MAPPED-ADDRESS 192.0.2.1:32853.
const RESPONSE_V4 = hex(`
  01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 08 00 01 a1 47 e1 12 a6 43
  00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
  80 28 00 04 c0 7d 4c 96`);

// §2.3 Sample IPv6 Response: XOR-MAPPED-ADDRESS [2001:db8:1234:5678:11:2233:4455:6677]:32853.
const RESPONSE_V6 = hex(`
  01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
  00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
  80 28 00 04 c8 fb 0b 4c`);

// §2.4 Sample Request with Long-Term Authentication: USERNAME "マトリックス", NONCE, REALM
// "example.org", password "The<U+00AD>M<U+00AA>tr<U+2168>" which SASLprep makes "TheMatrIX".
const REQUEST_LTC = hex(`
  00 01 00 60 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
  00 06 00 12 e3 83 9e e3 83 88 e3 83 aa e3 83 83 e3 82 af e3 82 b9 00 00
  00 15 00 1c 66 2f 2f 34 39 39 6b 39 35 34 64 36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41
  00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
  00 08 00 14 f6 70 24 65 6d d6 4a 3e 02 b8 e0 71 2e 85 c9 a2 8c a8 96 66`);
const LTC_USERNAME = '\u30de\u30c8\u30ea\u30c3\u30af\u30b9';
const LTC_PASSWORD = 'The\u00adM\u00aatr\u2168';

/** The message without its MESSAGE-INTEGRITY and FINGERPRINT, for re-encoding. */
function withoutAuth(msg: StunMessage): StunMessage {
  return { ...msg, attributes: msg.attributes.filter((a) => a.type !== Attr.MessageIntegrity && a.type !== Attr.Fingerprint) };
}

describe('STUN codec against RFC 5769', () => {
  it('2.1 sample request: decodes, verifies integrity and fingerprint, re-encodes byte for byte', () => {
    expect(isStunMessage(REQUEST)).toBe(true);
    const msg = decodeMessage(REQUEST);
    expect(msg).toMatchObject({ method: Method.Binding, cls: 'request' });
    expect(msg.transactionId.toString('hex')).toBe('b7e7a701bc34d686fa87dfae');
    expect(getAttr(msg, Attr.Software)?.toString()).toBe('STUN test client');
    expect(getAttr(msg, Attr.Username)?.toString()).toBe('evtj:h6vY');
    expect(verifyIntegrity(REQUEST, SHORT_TERM_PASSWORD)).toBe(true);
    expect(verifyIntegrity(REQUEST, Buffer.from('wrong'))).toBe(false);
    expect(verifyFingerprint(REQUEST)).toBe(true);
    const again = encodeMessage(withoutAuth(msg), { integrityKey: SHORT_TERM_PASSWORD, fingerprint: true, pad: 0x20 });
    expect(again.toString('hex')).toBe(REQUEST.toString('hex'));
  });

  it('2.2 sample IPv4 response: XOR-MAPPED-ADDRESS 192.0.2.1:32853', () => {
    const msg = decodeMessage(RESPONSE_V4);
    expect(msg).toMatchObject({ method: Method.Binding, cls: 'success' });
    expect(getAttr(msg, Attr.Software)?.toString()).toBe('test vector');
    expect(decodeXorAddress(getAttr(msg, Attr.XorMappedAddress)!, msg.transactionId)).toEqual({ address: '192.0.2.1', port: 32853 });
    expect(verifyIntegrity(RESPONSE_V4, SHORT_TERM_PASSWORD)).toBe(true);
    expect(verifyFingerprint(RESPONSE_V4)).toBe(true);
    expect(encodeXorAddress({ address: '192.0.2.1', port: 32853 }, msg.transactionId).toString('hex')).toBe('0001a147e112a643');
    const again = encodeMessage(withoutAuth(msg), { integrityKey: SHORT_TERM_PASSWORD, fingerprint: true, pad: 0x20 });
    expect(again.toString('hex')).toBe(RESPONSE_V4.toString('hex'));
  });

  it('2.3 sample IPv6 response: XOR-MAPPED-ADDRESS [2001:db8:1234:5678:11:2233:4455:6677]:32853', () => {
    const msg = decodeMessage(RESPONSE_V6);
    const addr = decodeXorAddress(getAttr(msg, Attr.XorMappedAddress)!, msg.transactionId);
    expect(addr).toEqual({ address: '2001:db8:1234:5678:11:2233:4455:6677', port: 32853 });
    expect(verifyIntegrity(RESPONSE_V6, SHORT_TERM_PASSWORD)).toBe(true);
    expect(verifyFingerprint(RESPONSE_V6)).toBe(true);
    expect(encodeXorAddress(addr, msg.transactionId).equals(getAttr(msg, Attr.XorMappedAddress)!)).toBe(true);
    const again = encodeMessage(withoutAuth(msg), { integrityKey: SHORT_TERM_PASSWORD, fingerprint: true, pad: 0x20 });
    expect(again.toString('hex')).toBe(RESPONSE_V6.toString('hex'));
  });

  it('2.4 sample request with long-term authentication: SASLprep, key, integrity, re-encoding', () => {
    expect(saslprep(LTC_PASSWORD)).toBe('TheMatrIX');
    const msg = decodeMessage(REQUEST_LTC);
    const username = getAttr(msg, Attr.Username)!.toString('utf8');
    const realm = getAttr(msg, Attr.Realm)!.toString('utf8');
    expect(username).toBe(LTC_USERNAME);
    expect(realm).toBe('example.org');
    expect(getAttr(msg, Attr.Nonce)?.toString()).toBe('f//499k954d6OL34oL9FSTvy64sA');
    const key = longTermKey(username, realm, LTC_PASSWORD);
    expect(verifyIntegrity(REQUEST_LTC, key)).toBe(true);
    expect(verifyIntegrity(REQUEST_LTC, longTermKey(username, realm, 'TheMatrix'))).toBe(false);
    expect(verifyFingerprint(REQUEST_LTC)).toBe(false); // this vector carries none
    expect(encodeMessage(withoutAuth(msg), { integrityKey: key }).toString('hex')).toBe(REQUEST_LTC.toString('hex'));
  });

  it('detects a flipped bit through the fingerprint and the integrity', () => {
    const broken = Buffer.from(REQUEST);
    broken[30] = broken[30]! ^ 0x01;
    expect(verifyFingerprint(broken)).toBe(false);
    expect(verifyIntegrity(broken, SHORT_TERM_PASSWORD)).toBe(false);
  });
});

describe('STUN codec: TURN pieces', () => {
  it('encodes the TURN message types (RFC 8656 §17)', () => {
    expect(messageType(Method.Allocate, 'request')).toBe(0x0003);
    expect(messageType(Method.Allocate, 'success')).toBe(0x0103);
    expect(messageType(Method.Allocate, 'error')).toBe(0x0113);
    expect(messageType(Method.Send, 'indication')).toBe(0x0016);
    expect(messageType(Method.Data, 'indication')).toBe(0x0017);
    expect(messageType(Method.ChannelBind, 'request')).toBe(0x0009);
  });

  it('round-trips ERROR-CODE, ChannelData and an IPv4 peer address', () => {
    expect(decodeErrorCode(encodeErrorCode({ code: 438, reason: 'Stale Nonce' }))).toEqual({ code: 438, reason: 'Stale Nonce' });
    const frame = encodeChannelData(0x4001, Buffer.from('hello'));
    expect(isChannelData(frame)).toBe(true);
    expect(isStunMessage(frame)).toBe(false);
    expect(decodeChannelData(frame)).toEqual({ channel: 0x4001, data: Buffer.from('hello') });
    const tid = Buffer.alloc(12, 7);
    expect(decodeXorAddress(encodeXorAddress({ address: '127.0.3.4', port: 40000 }, tid), tid)).toEqual({ address: '127.0.3.4', port: 40000 });
  });

  it('rejects truncated messages', () => {
    expect(() => decodeMessage(REQUEST.subarray(0, 40))).toThrow(/length/);
    expect(() => decodeMessage(Buffer.from('hello world, not stun'))).toThrow(/not a STUN/);
  });
});
