// The ESM entry: the CommonJS entry (index.js), loaded without Node's
// CommonJS loader. That loader's first use in an ES module process (through
// createRequire) costs about 2 ms on Node 20 and 1 ms on Node 22, more than
// everything else this entry loads. So index.js and the files it requires
// are read and compiled here as that loader would do it (vm.compileFunction
// with the CommonJS parameters; `.node` files through process.dlopen), and
// entered in require.cache, so a `require('quiver-live-native')` in the same
// process gets this same instance (and an earlier one is reused here).
// Builtins come from process.getBuiltinModule; any other module (a
// platform package binding.js does not find by its path) from the real
// `require`.
// Without process.getBuiltinModule (Node < 20.16, 22.3) it is createRequire.
const ENTRY = './index.js';
const getBuiltin = process.getBuiltinModule;

const api = getBuiltin
  ? loadCommonJs(getBuiltin('node:path').join(import.meta.dirname, ENTRY))
  : (await import('node:module')).createRequire(import.meta.url)(ENTRY);

function loadCommonJs(file) {
  const fs = getBuiltin('node:fs');
  const path = getBuiltin('node:path');
  const vm = getBuiltin('node:vm');
  const Module = getBuiltin('node:module');
  const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];

  function load(filename) {
    const cached = Module._cache[filename];
    if (cached) return cached.exports;
    let source = null;
    if (!filename.endsWith('.node')) {
      try {
        source = fs.readFileSync(filename, 'utf8');
      } catch (error) {
        if (error.code !== 'ENOENT') throw error;
        const missing = new Error(`Cannot find module '${filename}'`);
        missing.code = 'MODULE_NOT_FOUND';
        throw missing;
      }
    }
    const dirname = path.dirname(filename);
    const module = new Module(filename, null);
    module.filename = filename;
    Module._cache[filename] = module;
    try {
      if (source === null) process.dlopen(module, path.toNamespacedPath(filename));
      else vm.compileFunction(source, PARAMS, { filename }).call(module.exports, module.exports, requireFrom(module), module, filename, dirname);
    } catch (error) {
      delete Module._cache[filename];
      throw error;
    }
    module.loaded = true;
    return module.exports;
  }

  function requireFrom(parent) {
    let realRequire = null;
    const real = () => (realRequire ??= Module.createRequire(parent.filename));
    function require(id) {
      const builtin = getBuiltin(id);
      if (builtin) return builtin;
      if (id.startsWith('./') || id.startsWith('../') || path.isAbsolute(id)) return load(path.resolve(path.dirname(parent.filename), id));
      return real()(id);
    }
    require.resolve = (id, options) => real().resolve(id, options);
    require.cache = Module._cache;
    return require;
  }

  return load(file);
}

export const { createLiveSessionStore, GENERATION_FENCED_PHASES, withSourceLockSync, sourceLockPath } = api;
export default api;
