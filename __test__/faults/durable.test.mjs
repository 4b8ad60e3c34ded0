// Fault suite 8: `durable: true` (quick check). Appends land and replay; where
// strace is available, a writer process is traced to show that durable
// appends fsync the journal (and the directory of a new journal) and plain
// ones do not.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  loadNative, makeProject, removeDir, journalPath, snapshotPath, readJournal, WORKERS, resultLine, figure,
} from './helpers.mjs';

const { createLiveSessionStore } = loadNative();
const ID = 'durable';
const N = 20;

test('durable: true: appends land and replay', () => {
  const project = makeProject('durable');
  try {
    const store = createLiveSessionStore({ cwd: project, durable: true });
    const started = process.hrtime.bigint();
    let last;
    store.appendEvent({ id: ID, type: 'generate', count: N });
    for (let v = 1; v <= N; v++) last = store.appendEvent({ id: ID, type: 'variant_mounted', variant: v });
    const perAppend = Number(process.hrtime.bigint() - started) / 1e3 / (N + 1);
    const lines = readJournal(journalPath(project, ID));
    assert.equal(lines.lineCount, N + 1);
    assert.deepEqual(lines.bad, []);
    assert.deepEqual(lines.entries.map((e) => e.seq), Array.from({ length: N + 1 }, (_, i) => i + 1));
    fs.rmSync(snapshotPath(project, ID));
    assert.deepEqual(createLiveSessionStore({ cwd: project }).getSnapshot(ID), last);
    assert.equal(last.mountedVariants.length, N);
    figure(`native: durable store: ${N + 1} appends, ${perAppend.toFixed(0)} us per append, all replay`);
  } finally {
    removeDir(project);
  }
});

function syncCalls(durable) {
  const project = makeProject('durable-trace');
  try {
    const config = { impl: 'native', cwd: project, id: ID, mode: 'once', durable,
      events: Array.from({ length: 5 }, (_, i) => ({ id: ID, type: 'variant_mounted', variant: i + 1 })) };
    const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=fsync,fdatasync', '-o', path.join(project, 'trace'),
      process.execPath, path.join(WORKERS, 'appender.mjs'), JSON.stringify(config)], { encoding: 'utf8' });
    if (r.error || r.status !== 0) return { unavailable: (r.error && r.error.message) || r.stderr.trim().split('\n').pop() };
    const result = resultLine(r.stdout.split('\n'));
    assert.ok(result.outcomes.every((o) => o.ok));
    const trace = fs.readFileSync(path.join(project, 'trace'), 'utf8').split('\n').filter((l) => /f(data)?sync\(/.test(l));
    return { calls: trace.length };
  } finally {
    removeDir(project);
  }
}

test('durable: true fsyncs each append (strace)', (t) => {
  const probe = spawnSync('strace', ['-qq', '-e', 'trace=none', 'true'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    const why = `strace not usable here (${probe.error ? probe.error.message : probe.stderr.trim()})`;
    console.log(`[faults] fsync trace skipped: ${why}`);
    t.skip(why);
    return;
  }
  const durable = syncCalls(true);
  const plain = syncCalls(false);
  if (durable.unavailable || plain.unavailable) {
    t.skip(`strace failed: ${durable.unavailable || plain.unavailable}`);
    return;
  }
  figure(`native: 5 appends to a new journal: ${durable.calls} fsync/fdatasync calls with durable: true, ${plain.calls} without`);
  assert.ok(durable.calls >= 6, `durable: ${durable.calls} sync calls for 5 appends + 1 new directory`);
  assert.equal(plain.calls, 0);
});
