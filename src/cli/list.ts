import { profiles } from '../profiles/index.ts';
import { catalog } from '../scenarios/index.ts';

export function listCatalog(out: (line: string) => void = console.log): void {
  out('Scenarios:');
  for (const s of catalog) {
    out(`  ${s.id}${s.control ? ' (control: runs only when selected)' : ''}  [seeds ${s.seeds.join(', ')}]`);
    out(`      ${s.description}`);
    out(`      options: ${Object.entries(s.defaults).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  }
  out('\nProfiles:');
  for (const p of profiles) out(`  ${p.name.padEnd(28)} ${p.kind.padEnd(10)} ${p.description}`);
}
