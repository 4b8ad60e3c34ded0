// The ESM entry: index.js (the CommonJS entry) through Node's own require, so
// that `import` and `require` share one instance and one module cache. ESM
// spells its export names out: they are lib/api.cjs's EXPORTS, which
// __test__/esm-entry.test.mjs holds this line to.
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./index.js');

export const { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } = api;
export default api;
