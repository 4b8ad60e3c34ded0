//! Cross-process source lock (core, napi-free).
