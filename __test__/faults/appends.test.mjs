// Fault suite 1: four processes append 300 events each to one session.
//
// Expected of the package: 1,201 lines (1 initial + 1,200), sequence numbers
// exactly 1..1201 in file order, no event lost, a fresh replay equal to the
// state the last writer returned and to the snapshot file it left. What the
// old module does under the same load varies from run to run: the bench's
// `contention` workload counts it (docs/BENCHMARKS.md).

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  loadNative, makeProject, removeDir, journalPath, snapshotPath,
  readJournal, seqStats, startWorker, resultLine, expectClean, figure,
} from './helpers.mjs';

const WRITERS = 4;
const PER_WRITER = 300;
const ID = 'multi';

async function runConcurrentAppends() {
  const project = makeProject('appends');
  const create = loadNative().createLiveSessionStore;
  create({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 4, pageUrl: 'http://x/' });

  const goFile = path.join(project, 'go');
  let ready = 0;
  let release;
  const allReady = new Promise((resolve) => { release = resolve; });
  const workers = [];
  for (let w = 0; w < WRITERS; w++) {
    workers.push(startWorker('appender.mjs', {
      impl: 'native', cwd: project, id: ID, mode: 'batch', writer: w, count: PER_WRITER, goFile,
    }, {
      onLine: (line) => { if (line === 'ready' && ++ready === WRITERS) release(); },
    }));
  }
  await Promise.race([allReady, Promise.all(workers.map((w) => w.done))]);
  const started = Date.now();
  fs.writeFileSync(goFile, '');
  const results = await Promise.all(workers.map((w) => w.done));
  const elapsed = Date.now() - started;
  results.forEach((r, w) => expectClean(r, `writer ${w}`));
  const reports = results.map((r) => resultLine(r.lines));

  const journal = readJournal(journalPath(project, ID));
  const seqs = seqStats(journal.entries);
  const markers = new Map();
  for (const e of journal.entries) {
    if (e.event && typeof e.event.w === 'number') {
      const key = `${e.event.w}:${e.event.i}`;
      markers.set(key, (markers.get(key) || 0) + 1);
    }
  }
  const lostInJournal = WRITERS * PER_WRITER - markers.size;
  const doubledMarkers = [...markers.values()].filter((n) => n > 1).length;

  let snapshotFile = null;
  try { snapshotFile = JSON.parse(fs.readFileSync(snapshotPath(project, ID), 'utf8')); } catch { /* torn */ }
  const hydrated = create({ cwd: project }).getSnapshot(ID, { includeCompleted: true });
  fs.rmSync(snapshotPath(project, ID), { force: true });
  const replayed = create({ cwd: project }).getSnapshot(ID, { includeCompleted: true });

  return {
    project, journal, seqs, lostInJournal, doubledMarkers, reports, snapshotFile, hydrated, replayed, elapsed,
    workerErrors: reports.reduce((n, r) => n + (r ? r.errors : 1), 0),
  };
}

const MOUNTED = WRITERS * PER_WRITER * 9 / 10;
const MALFORMED = WRITERS * PER_WRITER / 10;

test('4 processes x 300 appends: 1,201 lines, seq 1..1201, nothing lost, replay agrees', async () => {
  const r = await runConcurrentAppends();
  try {
    const lost = MOUNTED - r.replayed.mountedVariants.length + r.lostInJournal;
    figure(`native: ${WRITERS} writers x ${PER_WRITER} appends in ${r.elapsed} ms: ${r.journal.lineCount} lines, `
      + `${r.seqs.extra} duplicate seq (${r.seqs.sharing} lines sharing one), ${r.lostInJournal} lost from the journal, `
      + `${lost} lost on replay, ${r.journal.bad.length} unparsable lines`);

    assert.equal(r.workerErrors, 0, `appendEvent failed in a writer: ${r.reports.map((x) => x && x.firstError).filter(Boolean).join('\n')}`);
    assert.equal(r.journal.lineCount, 1 + WRITERS * PER_WRITER);
    assert.deepEqual(r.journal.bad, []);
    assert.ok(r.journal.endsWithNewline);
    assert.equal(r.seqs.extra, 0, 'duplicate seq');
    assert.deepEqual(r.journal.entries.map((e) => e.seq), Array.from({ length: 1201 }, (_, i) => i + 1));
    assert.equal(r.lostInJournal, 0);
    assert.equal(r.doubledMarkers, 0);

    // The replay sees every event's effect.
    assert.equal(r.replayed.phase, 'generate_requested');
    assert.equal(r.replayed.pendingEventSeq, 1);
    assert.equal(r.replayed.mountedVariants.length, MOUNTED);
    assert.equal(r.replayed.diagnostics.length, MALFORMED);
    assert.ok(r.replayed.diagnostics.every((d) => d.error === 'malformed_mount_ack'));
    assert.equal(r.replayed.renderState, 'mounted');

    // The snapshot file the last writer left describes the whole journal.
    assert.ok(r.snapshotFile, 'snapshot file parses');
    assert.equal(r.snapshotFile.__journalBytes, r.journal.bytes);
    assert.equal(r.snapshotFile.__nextSeq, 1202);
    assert.deepEqual(r.hydrated, r.replayed, 'store hydrated from the snapshot file = full replay');

    // The state the last writer returned (the one that saw all events) is
    // the replayed state: incremental derivation under contention is exact.
    const last = r.reports
      .map((x) => x.last)
      .reduce((a, b) => (b.mountedVariants.length + b.diagnostics.length > a.mountedVariants.length + a.diagnostics.length ? b : a));
    assert.equal(last.mountedVariants.length + last.diagnostics.length, WRITERS * PER_WRITER);
    assert.deepEqual(last, r.replayed);
  } finally {
    removeDir(r.project);
  }
});

// Regression: flush() once replayed without the journal lock and stat'ed the
// journal again before writing the snapshot file, so an append landing in
// between was claimed by a snapshot that lacked it; the next writer hydrating
// from it reused a sequence number. The snapshot now names the bytes replayed.
test('flush() in other processes while three processes append: no duplicate seq, snapshot file = replay',
  async () => {
    const project = makeProject('flush-race');
    const WRITERS_HERE = 3;
    const FLUSHERS = 2;
    const COUNT = 400;
    try {
      const { createLiveSessionStore } = loadNative();
      createLiveSessionStore({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 2 });
      const goFile = path.join(project, 'go');
      const stopFile = path.join(project, 'stop');
      let ready = 0;
      let release;
      const allReady = new Promise((resolve) => { release = resolve; });
      const onLine = (line) => { if (line === 'ready' && ++ready === WRITERS_HERE + FLUSHERS) release(); };
      const writers = Array.from({ length: WRITERS_HERE }, (_, writer) => startWorker('appender.mjs', {
        impl: 'native', cwd: project, id: ID, mode: 'batch', writer, count: COUNT, padBytes: 4000, goFile,
      }, { onLine }));
      const flushers = Array.from({ length: FLUSHERS }, () => startWorker('appender.mjs', {
        impl: 'native', cwd: project, id: ID, mode: 'flusher', goFile, stopFile,
      }, { onLine }));
      await Promise.race([allReady, Promise.all([...writers, ...flushers].map((w) => w.done))]);
      fs.writeFileSync(goFile, '');
      const results = await Promise.all(writers.map((w) => w.done));
      fs.writeFileSync(stopFile, '');
      const fres = await Promise.all(flushers.map((f) => f.done));
      results.forEach((r, w) => expectClean(r, `writer ${w}`));
      fres.forEach((r, f) => expectClean(r, `flusher ${f}`));
      const flushes = fres.map((r) => resultLine(r.lines));
      const journal = readJournal(journalPath(project, ID));
      const seqs = seqStats(journal.entries);
      const hydrated = createLiveSessionStore({ cwd: project }).getSnapshot(ID);
      const replayed = createLiveSessionStore({ cwd: project }).flush(ID);
      const spurious = flushes.reduce((n, f) => n + f.spurious, 0);
      figure(`native: ${WRITERS_HERE} writers x ${COUNT} appends + ${FLUSHERS} flush() loops `
        + `(${flushes.map((f) => f.flushes).join(' + ')} flushes): ${journal.lineCount} lines, ${seqs.extra} duplicate seq, `
        + `${spurious} flush results with a spurious journal_parse_failed, final snapshot file `
        + `${JSON.stringify(hydrated) === JSON.stringify(replayed) ? '= replay' : `!= replay (${hydrated.mountedVariants.length} vs ${replayed.mountedVariants.length} mounted, ${hydrated.diagnostics.length} vs ${replayed.diagnostics.length} diagnostics)`}`);
      assert.equal(journal.lineCount, 1 + WRITERS_HERE * COUNT);
      assert.deepEqual(journal.bad, []);
      assert.equal(seqs.extra, 0, 'duplicate seq');
      assert.ok(seqs.increasing);
      assert.equal(spurious, 0, 'flush() returned journal_parse_failed for a journal without a broken line');
      assert.deepEqual(hydrated, replayed, 'snapshot file left behind = replay');
    } finally {
      removeDir(project);
    }
  });
