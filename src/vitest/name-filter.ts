// `vitest run -t PATTERN` against the drain tests. vitest joins the names of a test and its
// describes with " " before 4 and with " > " from 5 on, so each test is named `<profile> >
// <scenario>` itself, inside one describe: the documented filters (`-t "nginx > gateway-delete-http"`)
// then select the same tests on every major the peer range allows. A filter that names the suite's
// profiles or scenarios but selects none of its tests would leave the job green with nothing run:
// that is refused at collection, with the names there are.

/**
 * The `-t` pattern of this vitest worker, if any. vitest has no public API for it; its worker state
 * has carried it as `config.testNamePattern` in every major from 3.2 to 5 (checked by
 * suites/package.test.ts on the oldest and the newest).
 */
export function testNamePattern(): RegExp | undefined {
  const worker = (globalThis as { __vitest_worker__?: { config?: { testNamePattern?: unknown } } }).__vitest_worker__;
  const pattern = worker?.config?.testNamePattern;
  if (pattern instanceof RegExp) return pattern;
  return typeof pattern === 'string' && pattern !== '' ? new RegExp(pattern) : undefined;
}

/** The full names a test `name` inside describe `title` has, as each vitest major joins them. */
function fullNames(title: string, name: string): string[] {
  return [`${title} ${name}`, `${title} > ${name}`];
}

/**
 * Throws when `pattern` names a profile or a scenario of the suite but selects none of
 * its tests: the fix is the name the tests have.
 */
export function checkNameFilter(pattern: RegExp | undefined, title: string, pairs: readonly { profile: string; scenario: string }[]): void {
  if (pattern === undefined || pairs.length === 0) return;
  const names = pairs.map((p) => `${p.profile} > ${p.scenario}`);
  // Without a `g` flag, test() keeps no state between calls.
  const matcher = new RegExp(pattern.source, pattern.flags.replace('g', ''));
  if (names.some((name) => fullNames(title, name).some((full) => matcher.test(full)))) return;
  // A filter for other tests of the project (it names no profile or scenario of this suite) is theirs.
  const words = [...pairs.map((p) => p.profile), ...pairs.map((p) => p.scenario)];
  if (!words.some((word) => pattern.source.includes(word))) return;
  const example = names[0] as string;
  throw new Error(
    `zerodrop/vitest: -t ${JSON.stringify(pattern.source)} selects none of the ${names.length} drain tests of this suite, so none would run. ` +
      `Each is named "${title} > <profile> > <scenario>"; select one with -t ${JSON.stringify(example)}, a scenario with -t ${JSON.stringify(pairs[0]?.scenario)}. ` +
      `Profiles: ${[...new Set(pairs.map((p) => p.profile))].join(', ')}. Scenarios: ${[...new Set(pairs.map((p) => p.scenario))].join(', ')}.`,
  );
}
