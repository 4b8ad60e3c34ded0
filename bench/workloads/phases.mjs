import { AGENT_PHASES, SYNTHETIC_PHASES, hexId, phaseEvent } from '../lib/events.mjs';
import { project, removeDir, perOp, alternate, row, CFG } from '../lib/harness.mjs';

/** 1,000 agent_phase appends to one fresh session: the names the server records against p0..p7. */
export async function run(impls) {
  const n = CFG.phaseOps;
  const id = hexId(2);
  const run = (mod, names) => () => {
    const dir = project('phases');
    const store = mod.createLiveSessionStore({ cwd: dir });
    const gen = phaseEvent(names);
    const us = perOp(n, (i) => store.appendEvent(gen(id, i)));
    removeDir(dir);
    return us;
  };
  const res = await alternate({
    native: run(impls.native, AGENT_PHASES),
    js: impls.js ? run(impls.js, AGENT_PHASES) : null,
    nativeP: run(impls.native, SYNTHETIC_PHASES),
    jsP: impls.js ? run(impls.js, SYNTHETIC_PHASES) : null,
  });
  row(`appendEvent ×${n.toLocaleString('en-US')} to one new session, agent_phase only: server's names (${AGENT_PHASES.slice(0, 2).join(', ')}, …)`, { old: res.js, native: res.native });
  row(`appendEvent ×${n.toLocaleString('en-US')} to one new session, agent_phase only: p0..p7`, { old: res.jsP, native: res.nativeP });
}
