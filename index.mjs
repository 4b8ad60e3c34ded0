// The ESM entry. It loads the CommonJS one through `createRequire`, which
// spares Node's CommonJS-to-ESM export scan of it.
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./index.js');

export const { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } = api;
export default api;
