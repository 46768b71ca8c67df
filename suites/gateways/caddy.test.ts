import { systemSuite } from './system-suite.ts';

systemSuite('caddy', false);
