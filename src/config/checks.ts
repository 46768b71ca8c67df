// Checks of the string settings shared by flags and zerodrop.config.ts, so that both say the same
// thing about the same value. Each returns undefined when the value is fine, else what is allowed.

import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isReporterPath, REPORTER_NAMES } from '../report/reporters/reporter.ts';

/**
 * kind node images and k3s releases are named by Kubernetes minor (and optionally patch) version;
 * with `images` (minor -> image), the minor must also be one zerodrop has an image for.
 */
export function kubeVersionProblem(value: string, images?: { provider: string; table: Readonly<Record<string, string>> }): string | undefined {
  const match = /^v?(1\.\d{1,2})(\.\d{1,3})?$/.exec(value);
  if (!match) return 'expected a Kubernetes version like v1.33 or 1.33 (optionally with a patch, v1.33.1)';
  if (images && images.table[match[1] ?? ''] === undefined) return `${images.provider} has no image for Kubernetes ${match[1]}; known: ${Object.keys(images.table).join(', ')}`;
  return undefined;
}

/**
 * A kind cluster name becomes a Docker container and a kubeconfig context name, so it is held to an
 * RFC 1123 DNS label (Kubernetes "DNS Label Names": lowercase letters, digits and '-', at most 63).
 */
export function dnsLabelProblem(value: string): string | undefined {
  return /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)
    ? undefined
    : 'expected a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters';
}

const DURATION = /^(?:\d+[smhd])+$/;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration written as Go's time.ParseDuration and kubectl do, in whole units (plus d for days): 90s, 30m, 2h, 1h30m, 7d. */
export function durationMs(value: string): number | undefined {
  if (!DURATION.test(value)) return undefined;
  let ms = 0;
  for (const [, count, unit] of value.matchAll(/(\d+)([smhd])/g)) ms += Number(count) * (UNIT_MS[unit ?? ''] ?? 0);
  return ms;
}

export function durationProblem(value: string): string | undefined {
  const ms = durationMs(value);
  if (ms === undefined) return 'expected a duration like 30m, 2h, 1h30m or 7d (whole numbers of s, m, h, d)';
  return ms > 0 ? undefined : 'must be longer than 0';
}

function statOf(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

export function kubeconfigProblem(value: string, cwd = process.cwd()): string | undefined {
  const stat = statOf(resolve(cwd, value));
  if (stat === undefined) return 'file not found';
  return stat.isFile() ? undefined : 'expected a kubeconfig file, found a directory';
}

/** The report directory may exist (as a directory) or not yet; what is in the way must not be a file. */
export function reportDirProblem(value: string, cwd = process.cwd()): string | undefined {
  if (value.trim() === '') return 'must not be empty';
  let path = resolve(cwd, value);
  for (;;) {
    const stat = statOf(path);
    if (stat !== undefined) {
      if (stat.isDirectory()) return undefined;
      return path === resolve(cwd, value) ? 'is an existing file, expected a directory' : `${path} is a file, so the directory cannot be created`;
    }
    const parent = dirname(path);
    if (parent === path) return undefined;
    path = parent;
  }
}

/** A built-in reporter's name, or the path (from the working directory) of a module whose default export is a reporter. */
export function reporterProblem(value: string, cwd = process.cwd()): string | undefined {
  if ((REPORTER_NAMES as readonly string[]).includes(value)) return undefined;
  if (!isReporterPath(value)) return `unknown reporter; allowed: ${REPORTER_NAMES.join(', ')}, or the path of a reporter module (./my-reporter.ts)`;
  return statOf(resolve(cwd, value))?.isFile() ? undefined : 'no such file; a reporter module\'s path is relative to the working directory (docs/extending.md, a reporter)';
}
