// What this repository proves about its gateway's drain, read by `npx zerodrop run` and by the
// vitest suite in test/drain.test.ts. Flags given to `zerodrop run` override it field by field.
import { defineConfig } from 'zerodrop';

export default defineConfig({
  // local: pods as processes on this machine (seconds a scenario); kind: a real cluster (Docker and kind).
  provider: process.env['ZERODROP_PROVIDER'] === 'kind' ? 'kind' : 'local',
  // The systems under test: `npx zerodrop list` names them. A CI matrix can pick one per job.
  profiles: (process.env['ZERODROP_PROFILES'] ?? 'reference').split(','),
  scenarios: ['backend-delete-http', 'backend-sigterm-keeps-accepting', 'gateway-delete-http'],
  reportDir: 'reports/drain',
  // Who the conformance report vouches for (Gateway API ConformanceReport `implementation`).
  implementation: { organization: 'example.com', project: 'my-gateway', version: 'v0.1.0', contact: ['@my-gateway/maintainers'] },
});
