// The ESM entry: index.js (the CommonJS entry) through Node's own require, so
// that `import` and `require` share one instance and one module cache.
import { createRequire } from 'node:module';

const ENTRY = './index.js';
const api = createRequire(import.meta.url)(ENTRY);

export const { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } = api;
export default api;
