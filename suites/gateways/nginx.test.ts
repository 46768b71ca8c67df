import { systemSuite } from './system-suite.ts';

systemSuite('nginx', true);
