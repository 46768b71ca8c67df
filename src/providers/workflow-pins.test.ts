// The nightly installs the tools the code is pinned for: kind at the release whose node images
// node-images.ts pins, and Helm 3 (helm.ts refuses any other major). And what a workflow linter
// (actionlint) does not read: the composite action's metadata, and every shell step's syntax
// (`bash -n`), so that a typo there fails `npm test` rather than the nightly at 02:17.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { packageRoot } from '../paths.ts';
import { helmMajorProblem } from './kube/helm.ts';
import { KIND_VERSION } from './node-images.ts';
import { controlPlanePins } from './netns/control-plane-binary.ts';

interface Step {
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, string>;
}
interface Workflow {
  env?: Record<string, string>;
  jobs: Record<string, { steps?: Step[]; strategy?: { matrix?: Record<string, unknown> } }>;
}

/** `bash -n` of a step's script, its `${{ }}` expressions replaced by a word (GitHub substitutes them before bash runs). */
function bashSyntaxError(script: string): string | undefined {
  try {
    execFileSync('bash', ['-n'], { input: script.replace(/\$\{\{[^}]*\}\}/g, 'X'), stdio: ['pipe', 'pipe', 'pipe'] });
    return undefined;
  } catch (err) {
    return String((err as { stderr?: unknown }).stderr ?? err);
  }
}

const nightly = parse(readFileSync(join(packageRoot, '.github/workflows/nightly.yml'), 'utf8')) as Workflow;

describe('the nightly workflow', () => {
  it('installs kind at the release the node images are pinned for', () => {
    expect(nightly.env?.['KIND_VERSION']).toBe(KIND_VERSION);
  });

  it('runs the netns job at every release kubernetes/ pins, and no other', () => {
    expect(nightly.jobs['netns']?.strategy?.matrix?.['kube']).toEqual(controlPlanePins().map((p) => p.version));
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

describe("the adopter example's workflow (examples/gateway-team)", () => {
  const example = parse(readFileSync(join(packageRoot, 'examples/gateway-team/.github/workflows/drain.yml'), 'utf8')) as Workflow;
  it('installs kind at the release the node images are pinned for', () => {
    expect(example.env?.['KIND_VERSION']).toBe(KIND_VERSION);
  });
  it('has no shell step bash cannot parse', () => {
    for (const step of Object.values(example.jobs).flatMap((job) => job.steps ?? [])) {
      if (step.run !== undefined) expect(bashSyntaxError(step.run), step.run).toBeUndefined();
    }
  });
});

describe('the workflows and the composite action', () => {
  const workflows = readdirSync(join(packageRoot, '.github/workflows')).filter((f) => /\.ya?ml$/.test(f));
  const action = parse(readFileSync(join(packageRoot, '.github/actions/systems-under-test/action.yml'), 'utf8')) as {
    name?: string;
    description?: string;
    runs?: { using?: string; steps?: Step[] };
  };

  it('the composite action has the metadata GitHub requires: name, description, runs.using composite, a shell on every run step', () => {
    expect(action.name).toBeTruthy();
    expect(action.description).toBeTruthy();
    expect(action.runs?.using).toBe('composite');
    expect(action.runs?.steps?.length).toBeGreaterThan(0);
    for (const step of action.runs?.steps ?? []) {
      expect(step.run !== undefined || step.uses !== undefined, JSON.stringify(step)).toBe(true);
      if (step.run !== undefined) expect(step.shell, JSON.stringify(step)).toBeTruthy();
    }
  });

  it('every shell step, in the workflows and the action, is valid bash', () => {
    const steps = [
      ...workflows.flatMap((f) => Object.values((parse(readFileSync(join(packageRoot, '.github/workflows', f), 'utf8')) as Workflow).jobs).flatMap((j) => j.steps ?? [])),
      ...(action.runs?.steps ?? []),
    ].filter((s) => s.run !== undefined);
    expect(steps.length).toBeGreaterThan(3);
    for (const step of steps) expect(bashSyntaxError(step.run ?? ''), step.run).toBeUndefined();
    expect(bashSyntaxError('if true; then echo')).toMatch(/syntax error/);
  });
});
