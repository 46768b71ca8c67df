// Credentials the harness holds (TURN passwords, kubeconfig tokens and keys) must never reach a log
// line or a report: they are registered here when they are read, and every text that leaves the
// process through the report or the console (pod output, error messages, rendered reports) passes
// through `redact`, which replaces each registered secret with ***.

const secrets = new Set<string>();

/** Shorter values are too likely to match ordinary text (and too weak to be worth hiding). */
const MIN_LENGTH = 6;

export const REDACTED = '***';

export function registerSecret(value: string | undefined | null): void {
  if (typeof value === 'string' && value.length >= MIN_LENGTH) secrets.add(value);
}

/** `text` with every registered secret replaced by ***, longest first (one may contain another). */
export function redact(text: string): string {
  if (secrets.size === 0) return text;
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  }
  return out;
}
