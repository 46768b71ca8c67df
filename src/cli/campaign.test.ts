import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun } from '../api/run.ts';
import { defineProfile } from '../profiles/define.ts';
import { definedProfiles } from '../config/config.ts';
import { listCatalog } from './list.ts';
import { HELP } from './help.ts';
import { campaignExitCode, campaignRounds, formatCampaign, keepsReport, keptReportDir, pairOf, pairsAcrossProviders, parseCampaignArgs, rowKey, tally, whyOf, type CampaignRow } from './campaign.ts';
import { UsageError } from '../config/usage-error.ts';
import { catalog } from '../scenarios/index.ts';
import { profiles } from '../profiles/index.ts';

describe('campaign tally', () => {
  it('flags a scenario x profile whose verdict changed between runs, and only that one', () => {
    const rows = new Map<string, CampaignRow>();
    const delete_ = { scenario: 'backend-delete-http', profile: 'reference', expected: 'pass' } as const;
    const idle = { scenario: 'backend-idle-exit', profile: 'reference', expected: 'pass' } as const;
    for (let i = 0; i < 3; i++) tally(rows, delete_, 'pass');
    expect(tally(rows, idle, 'pass', { run: 1 })).toBeUndefined();
    expect(tally(rows, idle, 'inconclusive', { run: 2, why: 'harnessResponsive: lagged' })).toEqual({
      run: 2,
      verdict: 'inconclusive',
      why: 'harnessResponsive: lagged',
      unexpected: false,
    });
    tally(rows, idle, 'pass', { run: 3 });
    const table = [...rows.values()];
    expect(table.map((r) => [r.scenario, r.disagreement, r.unexpected])).toEqual([
      ['backend-delete-http', false, 0],
      ['backend-idle-exit', true, 0],
    ]);
    const text = formatCampaign(table, 3);
    expect(text).toMatch(/backend-idle-exit \[reference\]\s+2\s+0\s+1\s+0\s+pass\s+DISAGREEMENT$/m);
    expect(text).toMatch(/expected to pass: 2 pairs, 1 passed in every run/);
    expect(text).toMatch(/1 with disagreement, 0 with an unexpected verdict/);
    tally(rows, idle, 'skipped', { run: 4, why: 'not installed' });
    // Each judged run, with why when it was not a pass: what the failures counted, run by run.
    expect(rows.get('backend-idle-exit\u0000reference')?.runs).toEqual([
      { run: 1, verdict: 'pass' },
      { run: 2, verdict: 'inconclusive', why: 'harnessResponsive: lagged' },
      { run: 3, verdict: 'pass' },
    ]);
  });

  it('flags a verdict that is the same every run but wrong: a mutant passing, a drain-correct system failing', () => {
    const rows = new Map<string, CampaignRow>();
    const falsePass = { scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', expected: 'fail' } as const;
    const falseFail = { scenario: 'gateway-delete-http', profile: 'nginx', expected: 'pass' } as const;
    const right = { scenario: 'gateway-delete-http', profile: 'nginx-naive', expected: 'fail' } as const;
    for (let run = 1; run <= 2; run++) {
      expect(tally(rows, falsePass, 'pass', { run })?.unexpected).toBe(true);
      expect(tally(rows, falseFail, 'fail', { run, why: 'noFailedRequests: 1 of 90 failed' })).toMatchObject({ unexpected: true, why: 'noFailedRequests: 1 of 90 failed' });
      expect(tally(rows, right, 'fail', { run })).toBeUndefined();
    }
    // Inconclusive is the harness declining to judge: a disagreement when mixed, never unexpected.
    tally(rows, right, 'inconclusive', { run: 3 });
    const table = [...rows.values()];
    expect(table.map((r) => [r.profile, r.disagreement, r.unexpected])).toEqual([
      ['mutant-exit-on-sigterm', false, 2],
      ['nginx', false, 2],
      ['nginx-naive', true, 0],
    ]);
    const text = formatCampaign(table, 3);
    expect(text).toMatch(/\[mutant-exit-on-sigterm\]\s+2\s+0\s+0\s+0\s+fail\s+UNEXPECTED \(2\)$/m);
    expect(text).toMatch(/expected to fail: 2 pairs, 0 failed in every run/);
    expect(text).toMatch(/2 with an unexpected verdict/);
  });

  it("holds each run to what its own option values make the pair's verdict", () => {
    // backend-delete-http passes the mutant that stops listening at SIGTERM only while its preStop outlasts deprogramming.
    const pair = (options?: Record<string, number>) => pairOf('backend-delete-http', 'mutant-refuse-after-sigterm', catalog, profiles, options);
    expect(pair()).toEqual({ scenario: 'backend-delete-http', profile: 'mutant-refuse-after-sigterm', expected: 'pass' });
    expect(pair({ preStopSeconds: 2 }).expected).toBe('pass');
    expect(pair({ preStopSeconds: 0 })).toEqual({ scenario: 'backend-delete-http', profile: 'mutant-refuse-after-sigterm' });
    const rows = new Map<string, CampaignRow>();
    expect(tally(rows, pair({ preStopSeconds: 0 }), 'fail', { run: 1 })).toBeUndefined();
    expect(tally(rows, pair({ preStopSeconds: 0 }), 'fail', { run: 2 })).toBeUndefined();
    expect([...rows.values()][0]).toMatchObject({ unexpected: 0, disagreement: false });
  });

  it('counts the pairs skipped in every run with their reasons instead of listing them', () => {
    const rows = new Map<string, CampaignRow>();
    const why = 'profile nginx cannot play the backend role';
    for (let run = 1; run <= 2; run++) {
      tally(rows, { scenario: 'backend-delete-http', profile: 'nginx', expected: 'pass' }, 'skipped', { run, why });
      tally(rows, { scenario: 'backend-delete-http', profile: 'reference', expected: 'pass' }, 'pass', { run });
    }
    const text = formatCampaign([...rows.values()], 2);
    expect(text).not.toMatch(/\[nginx\]/);
    expect(text).toContain(`skipped in every run: 1 pairs ("${why}")`);
  });
});

describe('campaign kept reports', () => {
  it('keeps a run whose verdict is not the expected one, or, with no expectation, not the first run\'s', () => {
    expect(keepsReport('pass', 'pass', undefined)).toBe(false);
    expect(keepsReport('fail', 'pass', undefined)).toBe(true);
    expect(keepsReport('inconclusive', 'pass', 'pass')).toBe(true);
    expect(keepsReport('pass', 'fail', 'fail')).toBe(true);
    expect(keepsReport('fail', 'fail', 'pass')).toBe(false);
    // No expectation: the first run sets what the others are held to; it is kept by nothing.
    expect(keepsReport('pass', undefined, undefined)).toBe(false);
    expect(keepsReport('fail', undefined, 'pass')).toBe(true);
    expect(keepsReport('pass', undefined, 'pass')).toBe(false);
    expect(keepsReport('skipped', 'pass', 'pass')).toBe(false);
    expect(keptReportDir(3, 'netns', 'gateway-delete-http', 'nginx')).toBe(join('runs', '3', 'netns', 'gateway-delete-http.nginx'));
  });
});

describe('campaign why', () => {
  it('names every assertion that gave the verdict, so an inconclusive run tells load from harness', () => {
    const loadHeld = { name: 'loadHeld', verdict: 'inconclusive', message: 'load "http" had 8 late starts' } as const;
    const harness = { name: 'harnessResponsive', verdict: 'inconclusive', message: 'the harness event loop lagged 131 ms' } as const;
    const passed = { name: 'noFailedRequests', verdict: 'pass', message: 'no request failed' } as const;
    expect(whyOf({ verdict: 'inconclusive', assertions: [passed, loadHeld, harness] })).toBe(
      'loadHeld: load "http" had 8 late starts; harnessResponsive: the harness event loop lagged 131 ms',
    );
    expect(whyOf({ verdict: 'inconclusive', assertions: [passed, loadHeld, { ...harness, verdict: 'pass' }] })).toBe('loadHeld: load "http" had 8 late starts');
    // A failure observed under bad load is still a failure: only the failed assertions are why.
    const failed = { name: 'noFailedRequests', verdict: 'fail', message: '3 of 90 failed' } as const;
    expect(whyOf({ verdict: 'fail', assertions: [failed, loadHeld] })).toBe('noFailedRequests: 3 of 90 failed');
    expect(whyOf({ verdict: 'inconclusive', assertions: [], reason: 'deploy failed: port in use' })).toBe('deploy failed: port in use');
  });
});

describe('campaign --help', () => {
  it('documents every flag the campaign accepts', () => {
    // The flags come from the parser's own refusal of an unknown one, so a flag added without its line fails here.
    const refusal = (() => {
      try {
        parseCampaignArgs(['--no-such-flag']);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    const flags = [...refusal.matchAll(/--[a-z-]+/g)].map((m) => m[0]).filter((f) => f !== '--no-such-flag');
    expect(flags.length).toBeGreaterThan(3);
    for (const flag of flags) expect(HELP.campaign).toMatch(new RegExp(`^  ${flag}\\b`, 'm'));
  });
});

describe('campaign selection', () => {
  it('runs the whole catalog against every profile, or the pairs --scenario and --profile name', () => {
    const all = parseCampaignArgs([]);
    expect(all.scenarios).toEqual(catalog);
    expect(all.profiles).toEqual(profiles);
    const one = parseCampaignArgs(['--runs', '5', '--scenario', 'backend-rollout-http', '--profile', 'mutant-refuse-after-sigterm', '--profile', 'reference']);
    expect(one.runs).toBe(5);
    expect(one.scenarios.map((s) => s.id)).toEqual(['backend-rollout-http']);
    expect(one.profiles.map((p) => p.name)).toEqual(['mutant-refuse-after-sigterm', 'reference']);
  });

  it('--ablations adds the ablated twins of the selected profiles, each on the selected scenarios that catch it', () => {
    expect(parseCampaignArgs([]).ablations).toEqual([]);
    const args = parseCampaignArgs(['--ablations', '--scenario', 'gateway-delete-http', '--scenario', 'gateway-scale-down', '--profile', 'haproxy']);
    expect(args.ablations.map((a) => a.name)).toEqual([
      'haproxy-without-prestop',
      'haproxy-without-prestop-margin',
      'haproxy-without-grace',
      'haproxy-without-stopsignal',
      'haproxy-without-idle-close-on-response',
      'haproxy-without-hard-stop-after',
    ]);
    const rounds = campaignRounds(args);
    expect(rounds[0]!.profiles.map((p) => p.name)).toEqual(['haproxy']);
    const hardStop = rounds.find((r) => r.profiles[0]!.name === 'haproxy-without-hard-stop-after')!;
    expect(hardStop.scenarios.map((s) => s.id)).toEqual(['gateway-delete-http']);
    expect(() => parseCampaignArgs(['--ablations', '--profile', 'mutant-exit-on-sigterm'])).toThrow(/--ablations: none of the selected profiles/);
  });

  it("takes a config's selection as its default, and --ablations the drain settings of the config's own profiles", () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerodrop-campaign-'));
    try {
      writeFileSync(join(dir, 'proxy.conf'), 'listen ${PORT};\ngraceful_timeout 3;\n');
      const proxy = defineProfile({
        name: 'my-proxy',
        role: 'gateway',
        protocols: ['http'],
        description: 'a proxy',
        directory: dir,
        command: ['my-proxy', '${POD_DIR}/proxy.conf'],
        config: { 'proxy.conf': 'proxy.conf' },
        preStop: { sleep: { seconds: 3 } },
        drain: { minDrainSeconds: 3, drainTimeoutSeconds: 8 },
        drainSettings: [
          { name: 'prestop', why: 'outlives deprogramming', change: 'no preStop', caughtBy: ['gateway-delete-http'], remove: 'preStop' },
          { name: 'graceful-timeout', why: 'bounds the drain', change: 'no graceful_timeout', caughtBy: ['gateway-slow-lb'], dropLines: ['graceful_timeout'] },
        ],
      });
      const config = { profiles: [proxy, 'mutant-exit-on-sigterm'], scenarios: ['gateway-delete-http'] };
      const args = parseCampaignArgs(['--ablations'], config);
      expect(args.profiles.map((p) => p.name)).toEqual(['my-proxy', 'mutant-exit-on-sigterm']);
      expect(args.scenarios.map((s) => s.id)).toEqual(['gateway-delete-http']);
      // Only the setting a selected scenario catches.
      expect(args.ablations.map((a) => a.name)).toEqual(['my-proxy-without-prestop']);
      expect(parseCampaignArgs(['--ablations', '--scenario', 'gateway-slow-lb'], config).ablations.map((a) => a.name)).toEqual(['my-proxy-without-graceful-timeout']);
      // Each ablation by name, in a campaign and in a run, as the built-ins' are.
      expect(parseCampaignArgs(['--profile', 'my-proxy-without-prestop'], config).profiles.map((p) => p.ablation?.setting)).toEqual(['prestop']);
      expect(planRun(config, { argv: ['--profile', 'my-proxy-without-graceful-timeout'] }).profiles.map((p) => p.name)).toEqual(['my-proxy-without-graceful-timeout']);
      expect(planRun({ ...config, profiles: [proxy, 'my-proxy-without-prestop'] }).profiles.map((p) => p.name)).toEqual(['my-proxy', 'my-proxy-without-prestop']);
      expect(() => planRun(config, { argv: ['--profile', 'my-proxy-without-typo'] })).toThrow(/--profile my-proxy-without-typo: unknown profile; known: my-proxy, my-proxy-without-prestop, my-proxy-without-graceful-timeout, /);
      const lines: string[] = [];
      listCatalog((line) => lines.push(line), definedProfiles(config));
      expect(lines.join('\n')).toMatch(/Ablations of the config file's profiles \(their drainSettings\):\n {2}my-proxy-without-prestop +fails gateway-delete-http\n {2}my-proxy-without-graceful-timeout +fails gateway-slow-lb$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('campaign across providers', () => {
  const reference = { scenario: 'backend-delete-http', profile: 'reference', expected: 'pass' } as const;
  const mutant = { scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', expected: 'fail' } as const;

  it('keeps a row per provider, and flags a pair one provider passed and another failed', () => {
    const rows = new Map<string, CampaignRow>();
    for (let run = 1; run <= 2; run++) {
      tally(rows, { ...reference, provider: 'local' }, 'pass', { run });
      tally(rows, { ...reference, provider: 'netns' }, 'pass', { run });
      tally(rows, { ...mutant, provider: 'local' }, 'fail', { run });
      // The model fails the mutant; the real cluster let it pass in run 2.
      tally(rows, { ...mutant, provider: 'netns' }, run === 1 ? 'fail' : 'pass', { run });
    }
    const table = [...rows.values()];
    expect(table.map((r) => [r.profile, r.provider])).toEqual([
      ['reference', 'local'],
      ['reference', 'netns'],
      ['mutant-exit-on-sigterm', 'local'],
      ['mutant-exit-on-sigterm', 'netns'],
    ]);
    expect(rows.get(rowKey({ ...mutant, provider: 'netns' }))?.counts).toEqual({ pass: 1, fail: 1, inconclusive: 0, skipped: 0 });
    expect(pairsAcrossProviders(table).map((p) => [p.profile, p.providersDisagree])).toEqual([
      ['reference', false],
      ['mutant-exit-on-sigterm', true],
    ]);
    const text = formatCampaign(table, 2);
    expect(text).toMatch(/^scenario \[profile\]\s+local\s+netns\s+expect$/m);
    // Each pair once, its providers side by side.
    expect(text.match(/\[reference\]/g)).toHaveLength(1);
    expect(text).toMatch(/^backend-delete-http \[reference\]\s+2\/0\/0\/0\s+2\/0\/0\/0\s+pass$/m);
    expect(text).toMatch(/^backend-delete-http \[mutant-exit-on-sigterm\]\s+0\/2\/0\/0\s+1\/1\/0\/0\s+fail\s+PROVIDERS DISAGREE {2}DISAGREEMENT \(netns\) {2}UNEXPECTED \(netns 1\)$/m);
    expect(text).toMatch(/expected to pass: 1 pairs; passed in every run: local 1, netns 1/);
    expect(text).toMatch(/expected to fail: 1 pairs; failed in every run: local 1, netns 0/);
    expect(text).toMatch(/2 run\(s\) on 2 providers \(local, netns\), 2 scenario x profile pairs, 1 with disagreement, 1 with an unexpected verdict, 1 where the providers disagree$/);
    expect(campaignExitCode(table)).toBe(1);
  });

  it('exits 1 on providers that disagree even when each is steady and no verdict is expected', () => {
    const rows = new Map<string, CampaignRow>();
    const unjudged = { scenario: 'gateway-reload-http', profile: 'haproxy-detach-first' };
    tally(rows, { ...unjudged, provider: 'local' }, 'pass', { run: 1 });
    tally(rows, { ...unjudged, provider: 'netns' }, 'fail', { run: 1 });
    const table = [...rows.values()];
    expect(table.map((r) => [r.disagreement, r.unexpected])).toEqual([
      [false, 0],
      [false, 0],
    ]);
    expect(campaignExitCode(table)).toBe(1);
    expect(formatCampaign(table, 1)).toMatch(/\[haproxy-detach-first\]\s+1\/0\/0\/0\s+0\/1\/0\/0\s+-\s+PROVIDERS DISAGREE$/m);
  });

  it('shows but does not flag inconclusive and skipped runs: only judged verdicts can disagree', () => {
    const rows = new Map<string, CampaignRow>();
    tally(rows, { ...reference, provider: 'local' }, 'pass', { run: 1 });
    tally(rows, { ...reference, provider: 'netns' }, 'inconclusive', { run: 1, why: 'loadHeld: 8 late starts' });
    tally(rows, { ...mutant, provider: 'local' }, 'fail', { run: 1 });
    tally(rows, { ...mutant, provider: 'netns' }, 'skipped', { run: 1, why: 'not installed' });
    const table = [...rows.values()];
    expect(pairsAcrossProviders(table).some((p) => p.providersDisagree)).toBe(false);
    expect(campaignExitCode(table)).toBe(0);
    const text = formatCampaign(table, 1);
    expect(text).toMatch(/^backend-delete-http \[reference\]\s+1\/0\/0\/0\s+0\/0\/1\/0\s+pass$/m);
    expect(text).toMatch(/^backend-delete-http \[mutant-exit-on-sigterm\]\s+0\/1\/0\/0\s+0\/0\/0\/1\s+fail$/m);
    expect(text).toMatch(/0 where the providers disagree$/);
  });

  it('exits as before on one provider: 0 when steady and as expected, 1 on a disagreement or an unexpected verdict', () => {
    const steady = new Map<string, CampaignRow>();
    tally(steady, { ...reference, provider: 'netns' }, 'pass', { run: 1 });
    tally(steady, { ...mutant, provider: 'netns' }, 'fail', { run: 1 });
    expect(campaignExitCode([...steady.values()])).toBe(0);
    // One provider's table is the single-provider table, named for its provider when not local.
    expect(formatCampaign([...steady.values()], 1)).toMatch(/^1 run\(s\) on netns, 2 scenario x profile pairs, 0 with disagreement, 0 with an unexpected verdict$/m);
    const wrong = new Map<string, CampaignRow>();
    tally(wrong, { ...mutant, provider: 'netns' }, 'pass', { run: 1 });
    expect(campaignExitCode([...wrong.values()])).toBe(1);
    const flaky = new Map<string, CampaignRow>();
    tally(flaky, reference, 'pass', { run: 1 });
    tally(flaky, reference, 'inconclusive', { run: 2 });
    expect(campaignExitCode([...flaky.values()])).toBe(1);
  });
});

describe('campaign --provider', () => {
  it('runs on local unless told, and gives each provider the flags it uses', () => {
    expect(parseCampaignArgs([]).providers).toEqual([{ provider: 'local', providerSettings: { name: 'local' } }]);
    const both = parseCampaignArgs(['--provider', 'local,netns', '--kube-version', '1.36', '--nodes', '3']);
    expect(both.providers).toEqual([
      { provider: 'local', providerSettings: { name: 'local' } },
      { provider: 'netns', providerSettings: { name: 'netns', kubeVersion: '1.36', nodes: 3 } },
    ]);
    expect(parseCampaignArgs(['--provider', 'netns', '--provider', 'local']).providers.map((p) => p.provider)).toEqual(['netns', 'local']);
  });

  it.each<[string[], RegExp]>([
    [['--provider', 'minikube'], /^--provider minikube: unknown provider; use one of local, netns, kind, k3s, cluster$/],
    [['--provider', 'local,minikube'], /^--provider minikube: unknown provider; /],
    [['--provider', 'local,netns,local'], /^--provider local: given twice; give each provider once$/],
    [['--provider', 'local,'], /^--provider: must not be empty; e\.g\. --provider local,netns$/],
    [['--nodes', '3'], /^--nodes: not used by --provider local$/],
    [['--provider', 'local,kind', '--nodes', '3'], /^--nodes: not used by --provider local,kind$/],
    [['--provider', 'local,netns', '--nodes', '0'], /^--nodes 0: expected a whole number of nodes from 1 to 16$/],
    [['--provider', 'netns', '--kube-version', 'v1.34.1'], /^--kube-version v1\.34\.1: netns has no control plane pinned for Kubernetes v1\.34\.1; pinned: /],
    [['--provider', 'local,netns', '--kube-version', '1.36,1.37'], /^--kube-version v1\.36\.3,v1\.37\.2: a campaign holds one cluster a provider, so one version; run a campaign for each$/],
  ])('%j is refused, naming the flag', (argv, message) => {
    expect(() => parseCampaignArgs(argv)).toThrow(UsageError);
    expect(() => parseCampaignArgs(argv)).toThrow(message);
  });
});

describe('campaign --gateway-class', () => {
  it("campaigns the class's dataplane as a profile of its own, on every cluster provider", () => {
    const args = parseCampaignArgs(['--provider', 'netns', '--gateway-class', 'traefik', '--scenario', 'gateway-delete-http']);
    expect(args.profiles.map((p) => p.name)).toEqual(['gatewayclass-traefik']);
    expect(args.providers[0]?.providerSettings.gatewayClass?.name).toBe('traefik');
    // Nothing is expected of an installed class: the campaign finds out, and counts.
    expect(pairOf('gateway-delete-http', 'gatewayclass-traefik', args.scenarios, args.profiles).expected).toBeUndefined();
    const named = parseCampaignArgs(['--provider', 'netns', '--gateway-class', 'traefik', '--profile', 'reference']);
    expect(named.profiles.map((p) => p.name)).toEqual(['reference', 'gatewayclass-traefik']);
  });

  it("takes the config's gatewayClassName, the flag overriding it", () => {
    const config = { gatewayClassName: 'eg', dataplaneSelector: 'app=envoy' };
    expect(parseCampaignArgs(['--provider', 'kind'], config).providers[0]?.providerSettings.gatewayClass).toMatchObject({ name: 'eg', dataplaneSelector: 'app=envoy' });
    expect(parseCampaignArgs(['--provider', 'kind', '--gateway-class', 'istio'], config).profiles.map((p) => p.name)).toEqual(['gatewayclass-istio']);
  });

  it.each<[string[], RegExp]>([
    [['--gateway-class', 'traefik'], /^--gateway-class: needs a cluster \(--provider netns, kind, k3s or cluster\)/],
    [['--provider', 'local,netns', '--gateway-class', 'traefik'], /^--gateway-class: needs a cluster /],
    [['--provider', 'netns', '--gateway-class', 'Traefik_X'], /^--gateway-class Traefik_X: expected the name of a GatewayClass/],
    [['--provider', 'netns', '--dataplane-selector', 'app=x'], /^--dataplane-selector: applies to --gateway-class/],
  ])('%j is refused, naming the flag', (argv, message) => {
    expect(() => parseCampaignArgs(argv)).toThrow(UsageError);
    expect(() => parseCampaignArgs(argv)).toThrow(message);
  });
});
