// Where a Node process spent its time, from the .cpuprofile that `node --cpu-prof` writes (the
// DevTools protocol's Profile: a call tree of nodes, and samples naming the node that was on top).
// `npm run bench -- --profile` writes one per run of each node:net client and prints the top of each,
// so that the gap between zerodrop's generator and the node:net floor has names.
//
// Self time only: a sample is charged to the function on top of the stack. Time in a native call
// (the socket write system call: `writeBuffer`) is charged to that call, and time waiting for
// events is `(idle)`.

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  /** Microseconds since the previous sample, one per sample. */
  timeDeltas: number[];
}

export interface SelfTime {
  /** `name file:line` (1-based line), or just the name for V8's own entries like `(garbage collector)`. */
  where: string;
  /** Share of the profile's sampled time, 0..1. */
  share: number;
  micros: number;
}

/** The `n` places with the most self time, most first. */
export function topSelfTime(profile: CpuProfile, n: number): SelfTime[] {
  const whereOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    whereOf.set(node.id, url === '' ? name : `${name} ${url.split('/').at(-1) ?? url}:${lineNumber + 1}`);
  }
  const micros = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const where = whereOf.get(id) ?? `(node ${id})`;
    micros.set(where, (micros.get(where) ?? 0) + delta);
    total += delta;
  });
  return [...micros]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([where, us]) => ({ where, micros: us, share: total > 0 ? us / total : 0 }));
}

export function formatSelfTime(rows: SelfTime[]): string {
  return rows.map((r) => `${(100 * r.share).toFixed(1).padStart(5)}%  ${r.where}`).join('\n');
}
