// The per-source-file lock: quiver-live-native's when its vendored bundle
// loads, else the JavaScript one in source-lock.js.mjs (see
// implementation.mjs). Written by `quiver-live vendor --shims`.
import { native } from './implementation.mjs';

const impl = native ?? (await import('./source-lock.js.mjs'));

export const withSourceLockSync = impl.withSourceLockSync;
export const sourceLockPath = impl.sourceLockPath;
