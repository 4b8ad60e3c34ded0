import fs from 'node:fs';
import path from 'node:path';
import { project, perOp, alternate, NOTES, MISSES, row, CFG } from '../lib/harness.mjs';

/** withSourceLockSync round trip, sourceLockPath alone, and the raw lock floor. */
export async function run(impls) {
  const file = 'src/pages/pricing.astro';
  const ctx = {};
  for (const [k, mod] of Object.entries(impls)) {
    const dir = project(`lock-${k}`);
    if (mod.withSourceLockSync(file, 'bench', () => 42, { cwd: dir }) !== 42) MISSES.push(`lock: ${k} fn value lost`);
    ctx[k] = { dir, mod };
  }
  const fdir = project('lock-floor');
  const lockPath = path.join(fdir, 'floor.lock');
  const payload = JSON.stringify({ owner: 'bench', token: '9b2f0c1e-7a55-4c1b-9d6e-1f2e3d4c5b6a', pid: process.pid, at: Date.now(), file: path.join(fdir, file) }) + '\n';
  const n = CFG.lockOps;
  const fn = () => 42;
  const trip = (k) => () => perOp(n, () => ctx[k].mod.withSourceLockSync(file, 'bench', fn, { cwd: ctx[k].dir }));
  const res = await alternate({
    native: trip('native'),
    js: ctx.js ? trip('js') : null,
    floor: () => perOp(n, () => {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, payload);
      fs.closeSync(fd);
      fs.unlinkSync(lockPath);
    }),
  });
  const p = (k) => () => perOp(n, () => ctx[k].mod.sourceLockPath(file, ctx[k].dir));
  const pathRes = await alternate({ native: p('native'), js: ctx.js ? p('js') : null });
  row('withSourceLockSync round trip (fn returns a value)', { old: res.js, native: res.native, floor: res.floor });
  row('sourceLockPath alone', { old: pathRes.js, native: pathRes.native });
  NOTES.push(`lock floor = openSync(wx) + writeSync of a ${payload.length}-byte owner record + closeSync + unlinkSync.`);
}
