// Fault suite 4: 25 rounds of a writer process SIGKILLed at a random moment
// (10-80 ms into its append loop). The writer records each event's marker in
// an acknowledgement file only after appendEvent returned. After every round:
// every acknowledged event is in the journal exactly once and replays, sequence
// numbers stay unique and increasing, a store hydrated from whatever snapshot
// file the dead writer left agrees with a full replay, and the next round's
// writer appends on top of whatever the kill left (including torn tails: the
// kernel rarely tears a write on SIGKILL, so every fifth round also leaves
// half a line by hand if the kill did not).

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  loadNative, makeProject, removeDir, journalPath, sessionsDir, readJournal, seqStats, startWorker, figure,
} from './helpers.mjs';

const ROUNDS = 25;
const ID = 'killed';

function readAcks(file) {
  let text = '';
  try { text = fs.readFileSync(file, 'utf8'); } catch { return []; }
  const lines = text.split('\n');
  lines.pop(); // '' after the last newline, or an ack cut short by the kill (not acknowledged)
  return lines.map(Number);
}

test(`${ROUNDS} SIGKILL rounds: no acknowledged event lost, store keeps working`, async () => {
  const { createLiveSessionStore } = loadNative();
  const project = makeProject('kill');
  const journal = journalPath(project, ID);
  const ackFile = path.join(project, 'acks');
  const started = Date.now();
  let naturalTears = 0;
  let injectedTears = 0;
  let hydrateChecks = 0;
  try {
    createLiveSessionStore({ cwd: project }).appendEvent({ id: ID, type: 'generate', count: 3 });

    let bytesBefore = fs.statSync(journal).size;
    for (let round = 0; round < ROUNDS; round++) {
      const delay = 10 + Math.random() * 70;
      const worker = startWorker('appender.mjs', {
        impl: 'native', cwd: project, id: ID, mode: 'forever', round,
        startMarker: (round + 1) * 100_000 + 1, padEvery: 8, padBytes: 65_536, ackFile,
      }, {
        onLine: (line, child) => {
          if (line === 'ready') setTimeout(() => child.kill('SIGKILL'), delay);
        },
      });
      const res = await worker.done;
      assert.equal(res.signal, 'SIGKILL', `round ${round}: writer was not killed but exited (${res.code}):\n${res.stderr}`);

      const acked = readAcks(ackFile);
      const lines = readJournal(journal);
      // A tail torn by this round's kill (not one left over from before it).
      if (!lines.endsWithNewline && lines.bytes !== bytesBefore) naturalTears++;

      // Every acknowledged event is on a whole line of its own, once.
      const seen = new Map();
      for (const e of lines.entries) {
        if (e.type === 'variant_mounted') seen.set(e.event.variant, (seen.get(e.event.variant) || 0) + 1);
      }
      const lostFromJournal = acked.filter((m) => !seen.has(m));
      const doubled = [...seen].filter(([, n]) => n > 1);
      assert.deepEqual(lostFromJournal, [], `round ${round}: acknowledged events missing from the journal`);
      assert.deepEqual(doubled, [], `round ${round}: events journaled twice`);
      const seqs = seqStats(lines.entries);
      assert.equal(seqs.extra, 0, `round ${round}: duplicate seq`);
      assert.ok(seqs.increasing, `round ${round}: seq not increasing in file order`);

      // A store that trusts the dead writer's snapshot file (when it names the
      // journal's size) agrees with a replay from scratch.
      const hydrated = createLiveSessionStore({ cwd: project }).getSnapshot(ID, { includeCompleted: true });
      const replayed = createLiveSessionStore({ cwd: project }).flush(ID);
      assert.deepEqual(hydrated, replayed, `round ${round}: hydrated snapshot != replay`);
      hydrateChecks++;
      const mounted = new Set(replayed.mountedVariants);
      const lostOnReplay = acked.filter((m) => !mounted.has(m));
      assert.deepEqual(lostOnReplay, [], `round ${round}: acknowledged events missing from the replay`);
      const parseFailures = replayed.diagnostics.filter((d) => d.error === 'journal_parse_failed');
      assert.equal(parseFailures.length, lines.bad.length, `round ${round}: one diagnostic per torn line`);

      // Make sure the next writer also meets torn tails.
      if (round % 5 === 4 && lines.endsWithNewline) {
        const half = JSON.stringify({ seq: seqs.max + 1, id: ID, type: 'variant_mounted', ts: new Date().toISOString(),
          event: { id: ID, type: 'variant_mounted', variant: 1, round } });
        fs.appendFileSync(journal, half.slice(0, half.length >> 1));
        injectedTears++;
      }
      bytesBefore = fs.statSync(journal).size;
    }

    // The store still works after all that.
    const store = createLiveSessionStore({ cwd: project });
    const after = store.appendEvent({ id: ID, type: 'variant_mounted', variant: 7 });
    assert.ok(after.mountedVariants.includes(7));
    const final = readJournal(journal);
    assert.ok(final.endsWithNewline);
    assert.equal(final.entries[final.entries.length - 1].event.variant, 7);
    const acked = readAcks(ackFile);
    const replayed = createLiveSessionStore({ cwd: project }).flush(ID);
    const mounted = new Set(replayed.mountedVariants);
    const lost = acked.filter((m) => !mounted.has(m)).length;
    assert.deepEqual(after, replayed);
    assert.equal(lost, 0);
    assert.equal(final.bad.length, naturalTears + injectedTears, 'every torn tail stays one unparsable line');

    const leftovers = fs.readdirSync(sessionsDir(project)).filter((n) => n.endsWith('.tmp'));
    const unacked = final.entries.filter((e) => e.type === 'variant_mounted' && e.event.round !== undefined).length - acked.length;
    figure(`native: ${ROUNDS} SIGKILL rounds in ${Date.now() - started} ms: ${acked.length} acknowledged events, ${lost} lost; `
      + `${unacked} more landed unacknowledged; torn tails: ${naturalTears} from kills + ${injectedTears} injected, all recovered; `
      + `${hydrateChecks} hydrate-vs-replay checks; ${final.lineCount} journal lines, ${final.bytes} bytes; `
      + `${leftovers.length} snapshot staging files left by killed writers`);
  } finally {
    removeDir(project);
  }
});
