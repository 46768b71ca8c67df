// The reference backend (fixtures/reference-backend.mjs) in its correct drain mode, and the mutants:
// the same program deliberately broken in the ways real servers break. Every assertion of the harness
// is proven against these: it must pass on `reference` and fail on the mutant that breaks its rule.

import { defaultProbe } from '../model/workload.ts';
import type { BackendRequest, Profile } from './profile.ts';

export const REFERENCE_BACKEND = 'fixtures/reference-backend.mjs';

type DrainMode = 'graceful' | 'exit-on-sigterm' | 'refuse-after-sigterm' | 'hang-until-killed';

function referenceBackend(mode: DrainMode) {
  return (request: BackendRequest) => ({
    command: ['node', REFERENCE_BACKEND],
    env: { DRAIN_MODE: mode, PORT: String(request.port) },
    readinessProbe: defaultProbe({ httpGet: { port: request.port, path: '/healthz' } }),
  });
}

export const referenceProfile: Profile = {
  name: 'reference',
  kind: 'reference',
  description:
    'Correct drain: keeps accepting after SIGTERM, closes keep-alive connections politely, exits once idle.',
  requires: [],
  backend: referenceBackend('graceful'),
};

export const mutantProfiles: Profile[] = [
  {
    name: 'mutant-exit-on-sigterm',
    kind: 'mutant',
    description: 'Dies at SIGTERM (no handler): in-flight requests and open connections are cut.',
    requires: [],
    backend: referenceBackend('exit-on-sigterm'),
  },
  {
    name: 'mutant-refuse-after-sigterm',
    kind: 'mutant',
    description:
      'Stops listening at SIGTERM (the old Linkerd behaviour): peers that have not seen the endpoint removal are refused.',
    requires: [],
    backend: referenceBackend('refuse-after-sigterm'),
  },
  {
    name: 'mutant-hang-until-killed',
    kind: 'mutant',
    description: 'Ignores SIGTERM and never exits: runs out the grace period and is SIGKILLed mid-request.',
    requires: [],
    backend: referenceBackend('hang-until-killed'),
  },
];
