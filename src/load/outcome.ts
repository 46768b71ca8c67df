// Maps what went wrong with a request to an outcome class (docs/architecture.md).
// Errors come from node:net and node:http2, or from the generator itself (its own per-request
// timer, an end of the connection before a complete response, an abort). The class is what assertions and reports key on; the message is
// kept for humans.

import type { Outcome } from '../model/timeline.ts';

export interface Classified {
  outcome: Outcome;
  error: string;
}

/** Socket errors that mean the peer reset the connection (RST). */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Errors that mean the peer closed the connection (FIN) before a complete response. */
const EOF_CODES = new Set(['ZERODROP_EOF']);

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ZERODROP_TIMEOUT']);

const ABORT_CODES = new Set(['ABORT_ERR', 'ZERODROP_ABORTED']);

/** Every `code` on the error, its `cause` chain and an AggregateError's members, outermost first. */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): void => {
    if (depth > 8 || e === null || typeof e !== 'object' || seen.has(e)) return;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    if (e instanceof AggregateError) for (const inner of e.errors) visit(inner, depth + 1);
    visit((e as { cause?: unknown }).cause, depth + 1);
  };
  visit(err, 0);
  return codes;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/** Classifies a failed request. */
export function classifyError(err: unknown): Classified {
  const codes = errorCodes(err);
  const message = errorMessage(err);
  const has = (set: Set<string>) => codes.some((c) => set.has(c));
  if (codes.includes('ECONNREFUSED')) return { outcome: 'refused', error: message };
  if (has(ABORT_CODES) || (err instanceof Error && err.name === 'AbortError')) {
    return { outcome: 'error', error: 'aborted' };
  }
  if (has(TIMEOUT_CODES)) return { outcome: 'timeout', error: message };
  if (has(RESET_CODES)) return { outcome: 'reset', error: message };
  if (has(EOF_CODES)) return { outcome: 'eof', error: message };
  return { outcome: 'error', error: message };
}

/** A response that arrived: statuses >= 500 are failures of class `status`, and with `okStatus` 2xx, every status but a 2xx. */
export function classifyStatus(status: number, okStatus?: '2xx'): Outcome {
  if (okStatus === '2xx') return status >= 200 && status < 300 ? 'ok' : 'status';
  return status >= 500 ? 'status' : 'ok';
}

/** An error the generator raises itself, carrying a code that classifyError knows. */
export function harnessError(code: 'ZERODROP_TIMEOUT' | 'ZERODROP_ABORTED' | 'ZERODROP_EOF', message: string): Error {
  return Object.assign(new Error(message), { code });
}
