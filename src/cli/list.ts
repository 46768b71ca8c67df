import { ablatedProfiles, profiles } from '../profiles/index.ts';
import type { Profile } from '../profiles/profile.ts';
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
    // A broken profile passing here is by design, not a harness bug: say so where people look.
    for (const [profile, why] of Object.entries(s.tolerates ?? {})) out(`      passes ${profile} by design: ${why}`);
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
