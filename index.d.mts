// Types of the ESM entry (index.mjs): the same API as index.d.ts, as an ES
// module, with the CommonJS exports object as its default export.
import * as api from './index.js'

export * from './index.js'
export default api
