// Fault suite 2: a crash leaves half a journal line with no newline; the next
// two appends must both survive a replay, and the fragment must cost exactly
// one journal_parse_failed diagnostic. With QUIVER_REFERENCE_DIR the old module
// is run the same way, and must lose the first of them (what the package
// fixes, as docs/RELIABILITY.md says).

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  loadNative, referenceOrSkip, makeProject, removeDir, journalPath, snapshotPath, readJournal, figure,
} from './helpers.mjs';

const ID = 'torn';

/**
 * `survivor`: the two appends come from the store instance that wrote the
 * journal before the crash (another process crashed mid-append while this
 * one kept running); otherwise from a fresh store (a restarted process).
 */
function tornTailScenario(create, { survivor }) {
  const project = makeProject('torn');
  const journal = journalPath(project, ID);
  const first = create({ cwd: project });
  first.appendEvent({ id: ID, type: 'generate', count: 3, pageUrl: 'http://app.test/' });
  first.appendEvent({ id: ID, type: 'agent_phase', phase: 'planning', at: 1 });

  // The crash: the next entry's first half, no newline.
  const crashed = JSON.stringify({
    seq: 3, id: ID, type: 'variants_ready', ts: new Date().toISOString(),
    event: { id: ID, type: 'variants_ready', arrivedVariants: 3, sourceFile: 'src/crashed.css' },
  });
  fs.appendFileSync(journal, crashed.slice(0, Math.floor(crashed.length / 2)));

  const writer = survivor ? first : create({ cwd: project });
  writer.appendEvent({ id: ID, type: 'variant_mounted', variant: 2 });
  const returned = writer.appendEvent({ id: ID, type: 'steer', pageUrl: 'http://app.test/steer', message: 'tighter' });

  const lines = readJournal(journal);
  fs.rmSync(snapshotPath(project, ID), { force: true });
  const replayed = create({ cwd: project }).getSnapshot(ID, { includeCompleted: true });
  return { project, lines, returned, replayed };
}

function summarize(r) {
  const parseFailures = r.replayed.diagnostics.filter((d) => d.error === 'journal_parse_failed');
  const mountedReplays = r.replayed.mountedVariants.includes(2);
  const steerReplays = r.replayed.phase === 'steer_requested' && r.replayed.pendingEvent?.message === 'tighter';
  return { parseFailures, mountedReplays, steerReplays, lost: Number(!mountedReplays) + Number(!steerReplays) };
}

for (const survivor of [false, true]) {
  const who = survivor ? 'the store that was running before the crash' : 'a fresh store';
  test(`torn tail, then two appends from ${who}: both replay, one parse diagnostic`, (t) => {
    const r = tornTailScenario(loadNative().createLiveSessionStore, { survivor });
    try {
      const s = summarize(r);
      figure(`native (${survivor ? 'surviving store' : 'fresh store'}): after a torn tail, ${2 - s.lost}/2 following events replay, `
        + `${s.parseFailures.length} journal_parse_failed diagnostic(s)`);

      // On disk: the fragment kept on a line of its own, then two whole lines.
      assert.equal(r.lines.lineCount, 5);
      assert.ok(r.lines.endsWithNewline);
      assert.deepEqual(r.lines.bad.map((b) => b.line), [3]);
      assert.deepEqual(r.lines.entries.map((e) => [e.seq, e.type]),
        [[1, 'generate'], [2, 'agent_phase'], [3, 'variant_mounted'], [4, 'steer']]);

      assert.ok(s.mountedReplays, 'the first event after the tear replays');
      assert.ok(s.steerReplays, 'the second event after the tear replays');
      assert.equal(r.replayed.pendingEventSeq, 4);
      assert.equal(r.replayed.renderState, 'mounted');
      assert.equal(s.parseFailures.length, 1);
      assert.equal(s.parseFailures[0].line, 3);
      assert.equal(r.replayed.diagnostics.length, 1);
      assert.deepEqual(r.returned, r.replayed, 'what appendEvent returned = a replay from scratch');
    } finally {
      removeDir(r.project);
    }
  });
}

// The loss this package prevents: the old module appends the next line to
// the fragment, so the two make one unparsable line and that event is gone.
test('old module, torn tail: the first event after the tear is lost, where the package keeps both (QUIVER_REFERENCE_DIR)', async (t) => {
  const refPath = referenceOrSkip(t);
  if (!refPath) return;
  const create = (await import(pathToFileURL(refPath).href)).createLiveSessionStore;
  const r = tornTailScenario(create, { survivor: false });
  try {
    const s = summarize(r);
    figure(`old module: after a torn tail, ${2 - s.lost}/2 following events replay `
      + `(first ${s.mountedReplays ? 'replays' : 'LOST'}, second ${s.steerReplays ? 'replays' : 'LOST'}), `
      + `${s.parseFailures.length} journal_parse_failed, ${r.lines.lineCount} lines`);
    assert.deepEqual([s.mountedReplays, s.steerReplays], [false, true], 'the first event after the tear is lost, the second replays');
    assert.equal(r.lines.lineCount, 4, 'the fragment and the first event share a line');
    assert.deepEqual(r.lines.bad.map((b) => b.line), [3]);
    assert.equal(s.parseFailures.length, 1);
  } finally {
    removeDir(r.project);
  }
});
