// Regenerates fixtures/old-module/: the sessions directory the old JS module
// writes for scenario.mjs. Needs a checkout of the reference:
//   QUIVER_REFERENCE_DIR=/path/to/impeccable node __test__/cli/gen-old-fixture.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeScenario } from './scenario.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export function oldModulePath() {
  const dir = process.env.QUIVER_REFERENCE_DIR;
  if (!dir) return null;
  const file = path.join(dir, 'skill', 'scripts', 'live', 'session-store.mjs');
  if (!fs.existsSync(file)) throw new Error(`QUIVER_REFERENCE_DIR=${dir}: ${file} not found`);
  return file;
}

/** Writes the scenario with the old module into `project`; returns its sessions dir. */
export async function writeWithOldModule(project) {
  const { createLiveSessionStore } = await import(pathToFileURL(oldModulePath()).href);
  const store = createLiveSessionStore({ cwd: project });
  writeScenario(store);
  return store.rootDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!oldModulePath()) {
    console.error('set QUIVER_REFERENCE_DIR to a checkout of the reference');
    process.exit(2);
  }
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-live-oldfix-'));
  fs.mkdirSync(path.join(project, '.git'));
  const sessions = await writeWithOldModule(project);
  const target = path.join(here, 'fixtures', 'old-module');
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  for (const name of fs.readdirSync(sessions).sort()) {
    fs.copyFileSync(path.join(sessions, name), path.join(target, name));
    console.log(name);
  }
  fs.rmSync(project, { recursive: true, force: true });
}
