import { ablatedProfiles, profiles } from '../profiles/index.ts';
import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { expectedVerdict, toleration, tolerationWhy } from '../scenarios/expected.ts';
import { catalog } from '../scenarios/index.ts';
import { SEEDS } from '../scenarios/seeds.ts';
import { describeKind, OPTION_KINDS } from '../scenarios/option-kinds.ts';

/** `defined`: the profiles a config file made with defineProfile and their ablations, listed after the built-in ones. */
export function listCatalog(out: (line: string) => void = console.log, defined: readonly Profile[] = []): void {
  out('Scenarios:');
  for (const s of catalog) {
    out(`  ${s.id}${s.control ? ' (control: runs only when selected)' : ''}${s.seeds.length > 0 ? `  [seeds ${s.seeds.join(', ')}]` : ''}`);
    out(`      ${s.description}`);
    out(`      options: ${Object.entries(s.defaults).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    if (s.cluster) out(`      on a cluster: ${Object.entries(s.cluster).map(([k, v]) => `${k}=${v}`).join(' ')} (its balancer picks pods at random)`);
    // A broken profile passing here is by design, not a harness bug: say so where people look.
    for (const [profile, declared] of Object.entries(s.tolerates ?? {})) out(`      passes ${profile} by design: ${tolerationWhy(declared)}`);
    for (const [profile, why] of Object.entries(s.knownFailures ?? {})) out(`      fails ${profile}, a drain-correct profile, by what the system does: ${why}`);
  }
  out('\nOption values (--set key=value, config `set`):');
  for (const [key, kind] of Object.entries(OPTION_KINDS)) out(`  ${key.padEnd(20)} ${describeKind(kind)}`);
  out('\nSeeds (the discussions each scenario comes from):');
  for (const [seed, { title, url }] of Object.entries(SEEDS)) out(`  ${seed}  ${title}\n       ${url}`);
  out('\nProfiles:');
  for (const p of profiles) out(`  ${p.name.padEnd(28)} ${p.kind.padEnd(10)} ${p.description}`);
  // Named with --profile, or all with `zerodrop campaign --ablations` (docs/drain-settings.md).
  out('\nAblations (a drain-correct profile without one drain setting; must fail the scenarios named):');
  for (const p of ablatedProfiles) out(ablationLine(p));
  const own = defined.filter((p) => p.ablation === undefined);
  const ownAblations = defined.filter((p) => p.ablation !== undefined);
  if (own.length > 0) out('\nProfiles defined by the config file:');
  for (const p of own) out(`  ${p.name.padEnd(28)} ${p.kind.padEnd(10)} ${p.description}`);
  if (ownAblations.length > 0) out('\nAblations of the config file\'s profiles (their drainSettings):');
  for (const p of ownAblations) out(ablationLine(p));
}

function ablationLine(p: Profile): string {
  const caught = p.ablation?.caughtBy ?? [];
  return `  ${p.name.padEnd(40)} ${caught.length > 0 ? `fails ${caught.join(', ')}` : 'caught by no scenario: not needed, or a gap of the catalog (docs/drain-settings.md)'}`;
}

/**
 * `zerodrop list --scenario ID`: one scenario in full, what a user reads before `--set`: each option
 * with its default, its nightly value, the values it takes and what it means; the profiles that can
 * play it with the verdict each must have (the campaign's expectation); and its seeds.
 */
export function describeScenario(def: ScenarioDefinition, out: (line: string) => void = console.log, defined: readonly Profile[] = []): void {
  out(`${def.id}${def.control ? ' (control: runs only when selected)' : ''}`);
  out(`  ${def.description}`);
  out(`  role: the profile is the ${def.role}; features: ${def.features.join(', ') || 'none'}`);
  out('\nOptions (--set key=value; --nightly takes the nightly value; a cluster provider, whose Service balancer picks pods at random, its cluster value):');
  const keys = Object.keys(def.defaults);
  const width = Math.max(...keys.map((k) => k.length));
  for (const key of keys) {
    const nightly = def.nightly[key];
    const kind = OPTION_KINDS[key as keyof typeof OPTION_KINDS];
    const cluster = def.cluster?.[key];
    const also = [cluster !== undefined ? `on a cluster ${cluster}` : '', nightly !== undefined && nightly !== def.defaults[key] ? `nightly ${nightly}` : ''].filter(Boolean);
    out(`  ${key.padEnd(width)}  ${String(def.defaults[key])}${also.length > 0 ? ` (${also.join(', ')})` : ''}`);
    out(`  ${' '.repeat(width)}  ${def.optionDocs[key]}${kind ? `; ${describeKind(kind)}` : ''}`);
  }
  out('\nProfiles that play it, and the verdict each must have:');
  for (const profile of [...profiles, ...defined, ...ablatedProfiles]) {
    try {
      def.build(profile, def.defaults);
    } catch (error) {
      if (error instanceof ProfileCannotPlay) continue;
      throw error;
    }
    const expected = expectedVerdict(def, profile);
    const why = toleration(def, profile.name) ?? def.knownFailures?.[profile.name];
    out(`  ${profile.name.padEnd(40)} ${expected ?? 'no expectation'}${why ? `: ${why}` : ''}`);
  }
  if (def.seeds.length > 0) out('\nSeeds (the discussions it comes from):');
  for (const seed of def.seeds) out(`  ${seed}  ${SEEDS[seed].title}\n       ${SEEDS[seed].url}`);
  out(`\nRun it: npx zerodrop run --scenario ${def.id} [--profile P] [--set key=value]`);
}
