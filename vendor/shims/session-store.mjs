// The live session store: quiver-live-native's when its vendored bundle
// loads, else the JavaScript one in session-store.js.mjs (see
// implementation.mjs). Written by `quiver-live vendor --shims`.
import { native } from './implementation.mjs';

const impl = native ?? (await import('./session-store.js.mjs'));

export const createLiveSessionStore = impl.createLiveSessionStore;
export const GENERATION_FENCED_PHASES = impl.GENERATION_FENCED_PHASES;
