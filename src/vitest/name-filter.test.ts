// The filter itself; reading it from a real vitest worker, on the oldest and newest major the peer
// range allows, is suites/package.test.ts's.
import { describe, expect, it } from 'vitest';
import { checkNameFilter } from './name-filter.ts';

const pairs = ['nginx', 'nginx-naive'].flatMap((profile) => ['gateway-delete-http', 'gateway-slow-lb'].map((scenario) => ({ profile, scenario })));
const check = (pattern: string | undefined) => () => checkNameFilter(pattern === undefined ? undefined : new RegExp(pattern), 'zerodrop', pairs);

describe('the -t filter of a drain suite', () => {
  it('takes the documented filters, as vitest 3 and 4 (" ") and 5 (" > ") join the names', () => {
    for (const pattern of [undefined, 'nginx > gateway-delete-http', 'gateway-slow-lb', 'nginx-naive', 'zerodrop nginx', 'zerodrop > nginx > gateway-delete-http', 'nginx > gateway-slow-lb$']) {
      expect(check(pattern), String(pattern)).not.toThrow();
    }
  });

  it('fails a filter that names the suite but selects none of its tests, with the names there are', () => {
    expect(check('ats-naive > gateway-delete-http')).toThrow(
      /-t "ats-naive > gateway-delete-http" selects none of the 4 drain tests of this suite, so none would run\. Each is named "zerodrop > <profile> > <scenario>"; select one with -t "nginx > gateway-delete-http".*Profiles: nginx, nginx-naive\. Scenarios: gateway-delete-http, gateway-slow-lb\./,
    );
    expect(check('nginx > gateway-rollout-http')).toThrow(/selects none of the 4 drain tests/);
  });

  it("leaves a filter for the project's other tests alone", () => {
    expect(check('parses the config')).not.toThrow();
  });
});
