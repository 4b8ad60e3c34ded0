//! Project root resolution, as quiver-cli's context.mjs resolves it.
