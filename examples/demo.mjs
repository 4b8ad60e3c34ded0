// A live design session from start to finish, through quiver-live-native,
// in a throwaway project. Run it with `npm run demo`.
//
// It plays the three parties of the live mode: the browser (generate,
// checkpoints, mount acks, accept), the agent (phases, variant plan, done,
// complete) and a helper process that reads the store from outside.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { createLiveSessionStore, withSourceLockSync, sourceLockPath, GENERATION_FENCED_PHASES } = require('../index.js');

const project = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-demo-'));
fs.mkdirSync(path.join(project, '.git'));
fs.mkdirSync(path.join(project, 'src'));
fs.writeFileSync(path.join(project, 'src', 'Hero.jsx'), 'export default () => <h1>Hello</h1>;\n');

const store = createLiveSessionStore({ cwd: project, sessionId: 'demo01' });
const { appendEvent, getSnapshot, listActiveSessions } = store; // methods work destructured

let step = 0;
function show(title, s) {
  step++;
  const diag = s.diagnostics.map((d) => d.error).join(', ') || '-';
  console.log(`\n${String(step).padStart(2)}. ${title}`);
  console.log(`    phase=${s.phase}  render=${s.renderState ?? '-'}  pending=${s.pendingEvent ? s.pendingEvent.type : '-'}`
    + `  expected/arrived=${s.expectedVariants}/${s.arrivedVariants}  visible=${s.visibleVariant ?? '-'}`);
  console.log(`    mounted=[${s.mountedVariants}]  failures=${s.mountFailures.length}  rev(browser/publication)=`
    + `${s.browserCheckpointRevision}/${s.publicationCheckpointRevision}  diagnostics: ${diag}`);
}

console.log(`project:  ${project}`);
console.log(`sessions: ${path.relative(project, store.rootDir)}`);

show('browser asks for 3 variants', appendEvent({ type: 'generate', count: 3, pageUrl: 'http://localhost:5173/', token: 'lease-1', screenshotPath: '/tmp/shot.png' }));
show('agent publishes its variant plan', appendEvent({ type: 'variant_plan', plan: [{ variant: 1, idea: 'bolder' }, { variant: 2, idea: 'quieter' }, { variant: 3, idea: 'layout' }] }));
for (const [phase, ms] of [['picked_up', 40], ['scaffolding', 900], ['first_reviewable', 2100]]) {
  appendEvent({ type: 'agent_phase', phase, durationMs: ms });
}
show('agent reports phases picked_up, scaffolding, first_reviewable', getSnapshot());
show('browser checkpoint: publication progress (rev 1)', appendEvent({ type: 'checkpoint', reason: 'variants_progress', revision: 1, arrivedVariants: 2 }));
show('agent done: 3 variants ready', appendEvent({ type: 'agent_done', sourceFile: 'src/Hero.jsx', arrivedVariants: 3 }));
show('browser mounted variant 1', appendEvent({ type: 'variant_mounted', variant: 1 }));
show('browser failed to mount variant 3', appendEvent({ type: 'variant_mount_failed', variant: 3, url: '/variants/3.jsx', error: 'SyntaxError: Unexpected token' }));
show('browser mounted variant 2 (sent as the string "2")', appendEvent({ type: 'variant_mounted', variant: '2' }));
show('browser checkpoint rev 4, showing variant 2', appendEvent({ type: 'checkpoint', revision: 4, owner: 'tab-a', visibleVariant: 2, paramValues: { hue: 210 } }));
show('a stale checkpoint (rev 3) arrives late', appendEvent({ type: 'checkpoint', revision: 3, owner: 'tab-b', visibleVariant: 1 }));

// Accepting edits the source file under the cross-process source lock.
const file = 'src/Hero.jsx';
console.log(`\n    source lock for ${file}: ${path.relative(project, sourceLockPath(file, project))}`);
withSourceLockSync(file, 'demo-accept', () => {
  show('user accepts variant 2 (under the source lock)', appendEvent({ type: 'accept', variantId: 2 }));
  fs.appendFileSync(path.join(project, file), '// accepted variant 2\n');
}, { cwd: project, waitMs: 1000 });
show('a late variants_ready from the canceled cycle is fenced off', appendEvent({ type: 'variants_ready' }));
console.log(`    fenced phases: ${[...GENERATION_FENCED_PHASES].join(', ')}`);

// Another process (a helper CLI) opens the same directory and reads.
const reader = createLiveSessionStore({ cwd: project });
console.log(`\n    a second store sees ${reader.listActiveSessions().length} active session(s); has('demo01') = ${reader.has('demo01')}`);

show('agent completes the session', appendEvent({ type: 'complete', file }));
console.log(`    active sessions now: ${listActiveSessions().length}; getSnapshot() = ${getSnapshot()}`);
console.log(`    with includeCompleted: phase=${getSnapshot('demo01', { includeCompleted: true }).phase}`);

const journal = fs.readFileSync(path.join(store.rootDir, 'demo01.jsonl'), 'utf8').trim().split('\n');
console.log(`\njournal: ${journal.length} lines, last: ${journal.at(-1).slice(0, 110)}...`);
const snapshotFile = JSON.parse(fs.readFileSync(path.join(store.rootDir, 'demo01.snapshot.json'), 'utf8'));
console.log(`snapshot file: __journalBytes=${snapshotFile.__journalBytes} (journal is ${fs.statSync(path.join(store.rootDir, 'demo01.jsonl')).size} bytes), __nextSeq=${snapshotFile.__nextSeq}`);

try {
  appendEvent({ type: 'generate', id: '../escape' });
} catch (err) {
  console.log(`bad input is refused and touches no file: ${err.message}`);
}

fs.rmSync(project, { recursive: true, force: true });
console.log('\ndemo finished; temporary project removed.');
