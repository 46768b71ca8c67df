import { systemSuite } from './system-suite.ts';

systemSuite('haproxy', true);
