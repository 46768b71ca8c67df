// Checks of the string settings shared by flags and zerodrop.config.ts, so that both say the same
// thing about the same value. Each returns undefined when the value is fine, else what is allowed.

import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

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
