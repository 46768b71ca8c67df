// Which chart profiles a netns session runs, and with which helm: a chart from a directory with the
// session's own helm build (never the helm on PATH), a repository chart only through a stand-in.

import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../paths.ts';
import { defineHelmProfile } from '../../profiles/define-helm.ts';
import { helmProfileSpec } from '../../profiles/helm-charts.ts';
import '../../profiles/helm-gateways.ts';
import { forgetHelmVersion } from '../kube/helm.ts';
import { netnsCharts } from './chart-stand-ins.ts';

const fromDirectory = defineHelmProfile({
  name: 'netns-charts-test-directory',
  description: 'a chart from a directory',
  chart: { chart: join(packageRoot, 'examples', 'helm-gateway', 'charts', 'nginx-gateway') },
  protocols: ['http'],
  terminationGracePeriodSeconds: 30,
});

describe('netns charts', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    forgetHelmVersion();
  });

  it('skip a chart from a directory with the build command while helm is not built, and run it once it is', async () => {
    const without = await netnsCharts(['kubectl'], () => {});
    expect(without.unsupported(fromDirectory.name)).toMatch(/^profile netns-charts-test-directory installs its chart from \/.*nginx-gateway with helm v3\.\d+\.\d+, which is not built \(run: npm run helm:build/);
    const withHelm = await netnsCharts(['kubectl'], () => {}, '/cache/helm/v3.22.0-x/helm');
    expect(withHelm.unsupported(fromDirectory.name)).toBeUndefined();
    // The requirement is the session's to answer either way: never "helm not found on PATH".
    expect(without.answersForHelm(fromDirectory.name)).toBe(true);
    expect(without.answersForHelm('nginx')).toBe(false);
  });

  it('keep skipping a repository chart, saying that no chart repository is reachable', async () => {
    const charts = await netnsCharts(['kubectl'], () => {}, '/cache/helm/v3.22.0-x/helm');
    expect(charts.unsupported('ingress-nginx')).toMatch(/installs chart ingress-nginx [\d.]+ from https:\/\/kubernetes\.github\.io\/ingress-nginx with helm, and the netns cluster reaches no chart repository .*: it installs charts from a directory/);
  });

  it("install the run's release with the session's helm, not the one on PATH, and uninstall that release", async () => {
    dir = mkdtempSync(join(tmpdir(), 'zerodrop-netns-charts-test-'));
    const log = join(dir, 'argv.log');
    const helm = join(dir, 'built-helm');
    writeFileSync(helm, `#!/bin/sh\nif [ "$1" = version ]; then echo v3.22.0; exit 0; fi\nprintf '%s\\n' "$1 $2 $3" >> '${log}'\n`);
    chmodSync(helm, 0o755);
    const savedPath = process.env['PATH'];
    process.env['PATH'] = join(dir, 'no-helm-here');
    try {
      const charts = await netnsCharts(['kubectl'], () => {}, helm);
      const uninstall = await charts.install(helmProfileSpec(fromDirectory.name)!, { release: 'r-c0ffee00', namespace: 'zerodrop-c0ffee00', kubeconfig: 'apiVersion: v1\n', values: {} });
      await uninstall();
    } finally {
      process.env['PATH'] = savedPath;
    }
    expect(readFileSync(log, 'utf8')).toBe('upgrade --install r-c0ffee00\nuninstall r-c0ffee00 --namespace\n');
  });
});
