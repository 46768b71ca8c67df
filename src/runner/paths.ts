import { fileURLToPath } from 'node:url';

/** The repository root: pods run with it as their working directory so fixture paths resolve. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
