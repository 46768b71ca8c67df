import { describe, expect, it } from 'vitest';
import { classifyError, classifyStatus, errorCodes, harnessError } from './outcome.ts';

const coded = (code: string, message = code, cause?: unknown) => Object.assign(new Error(message, { cause }), { code });

describe('classifyError', () => {
  it('maps socket and generator error codes to outcome classes', () => {
    expect(classifyError(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1')).outcome).toBe('refused');
    expect(classifyError(coded('ECONNRESET', 'read ECONNRESET')).outcome).toBe('reset');
    expect(classifyError(coded('EPIPE')).outcome).toBe('reset');
    expect(classifyError(harnessError('ZERODROP_EOF', 'other side closed')).outcome).toBe('eof');
    expect(classifyError(coded('ETIMEDOUT')).outcome).toBe('timeout');
    expect(classifyError(harnessError('ZERODROP_TIMEOUT', 'late')).outcome).toBe('timeout');
    expect(classifyError(new Error('something odd'))).toEqual({ outcome: 'error', error: 'something odd' });
    expect(classifyError('a string')).toEqual({ outcome: 'error', error: 'a string' });
  });

  it('reports aborts as error "aborted"', () => {
    expect(classifyError(harnessError('ZERODROP_ABORTED', 'stop'))).toEqual({ outcome: 'error', error: 'aborted' });
    expect(classifyError(coded('ABORT_ERR'))).toEqual({ outcome: 'error', error: 'aborted' });
    expect(classifyError(new DOMException('x', 'AbortError'))).toEqual({ outcome: 'error', error: 'aborted' });
  });

  it('looks through causes and AggregateError members (happy eyeballs connect failures)', () => {
    const aggregate = Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'all failed'), {});
    expect(errorCodes(aggregate)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    expect(classifyError(aggregate).outcome).toBe('refused');
    expect(classifyError(new Error('wrapped', { cause: coded('ECONNRESET') })).outcome).toBe('reset');
  });
});

describe('classifyStatus', () => {
  it('fails 5xx only', () => {
    expect(classifyStatus(200)).toBe('ok');
    expect(classifyStatus(404)).toBe('ok');
    expect(classifyStatus(500)).toBe('status');
    expect(classifyStatus(503)).toBe('status');
  });

  it('with okStatus 2xx, fails every status but a 2xx: a gateway answering for itself (404 without a route) dropped the request', () => {
    expect(classifyStatus(200, '2xx')).toBe('ok');
    expect(classifyStatus(204, '2xx')).toBe('ok');
    expect(classifyStatus(404, '2xx')).toBe('status');
    expect(classifyStatus(302, '2xx')).toBe('status');
    expect(classifyStatus(503, '2xx')).toBe('status');
  });
});
