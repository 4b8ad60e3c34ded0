// Shared helpers for the Node suites: load the package, make throwaway projects.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
export const native = require('../index.js');

const projects = [];
process.on('exit', () => {
  for (const dir of projects) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * An empty project whose root is the directory itself (a `.git` stops the
 * walk); removed when the process exits, whether its test passed or not.
 */
export function tempProject(prefix = 'qln-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  projects.push(dir);
  fs.mkdirSync(path.join(dir, '.git'));
  return dir;
}

/** Every file under `dir` with its bytes, for "nothing changed" checks. */
export function treeBytes(dir) {
  const out = {};
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}
