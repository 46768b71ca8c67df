// The nightly installs the tools the code is pinned for: kind at the release whose node images
// node-images.ts pins, and Helm 3 (helm.ts refuses any other major).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../runner/paths.ts';
import { helmMajorProblem } from './kube/helm.ts';
import { KIND_VERSION } from './node-images.ts';

interface Workflow {
  env?: Record<string, string>;
  jobs: Record<string, { steps?: { uses?: string; with?: Record<string, string> }[] }>;
}

const nightly = parse(readFileSync(join(repoRoot, '.github/workflows/nightly.yml'), 'utf8')) as Workflow;

describe('the nightly workflow', () => {
  it('installs kind at the release the node images are pinned for', () => {
    expect(nightly.env?.['KIND_VERSION']).toBe(KIND_VERSION);
  });

  it('pins Helm 3 wherever it sets Helm up (setup-helm alone installs the newest, 4.x)', () => {
    const setups = Object.values(nightly.jobs).flatMap((job) => (job.steps ?? []).filter((step) => step.uses?.startsWith('azure/setup-helm@')));
    expect(setups.length).toBeGreaterThan(0);
    for (const step of setups) {
      const version = step.with?.['version'] ?? '';
      expect(version).toMatch(/^v3\.\d+\.\d+$/);
      expect(helmMajorProblem(version)).toBeUndefined();
    }
  });
});
