// One vitest test per scenario x profile of zerodrop.config.ts: `npm test` runs them,
// `npx vitest run -t "reference > gateway-delete-http"` runs one. The HTML, JUnit and conformance
// reports land in reports/drain/ when the suite ends.
import { drainSuite } from 'zerodrop/vitest';
import config from '../zerodrop.config.ts';

drainSuite(config);
