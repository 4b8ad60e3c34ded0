// Fault suite: what the store asks V8 (issue 16, classes 3, 5 and 12). A
// replay needs `Date.now()`, `Date.parse` and `JSON.parse`'s messages; the
// store never runs JavaScript while it holds the journal's lock or its own
// state, asks between attempts instead, and writes nothing derived from a
// call that failed. Each case runs in a child process with a bounded wait.

import test from 'node:test';
import assert from 'node:assert/strict';
import { referenceModulePath } from '../support/impls.mjs';
import { makeProject, removeDir, startWorker, resultLine, figure } from './helpers.mjs';

async function probe(config, { nodeArgs = [], timeoutMs = 120_000 } = {}) {
  const cwd = makeProject('host');
  try {
    const res = await startWorker('probe.mjs', { ...config, cwd }, { timeoutMs, nodeArgs }).done;
    assert.equal(res.signal, null, `${JSON.stringify(config)} died by ${res.signal}\n${res.stderr.slice(0, 2000)}`);
    assert.equal(res.code, 0, `${JSON.stringify(config)} exited ${res.code}\n${res.stderr.slice(0, 2000)}`);
    const result = resultLine(res.lines);
    assert.ok(result, `${JSON.stringify(config)} printed no result\n${res.stderr.slice(0, 2000)}`);
    return result;
  } finally {
    removeDir(cwd);
  }
}

test('a fake Date that appends to the session being replayed neither deadlocks nor fails', async () => {
  const got = await probe({ scenario: 'fakeDateAppends', impl: 'native' });
  assert.deepEqual(got.inner, { ok: true, value: 'from_the_clock' }, 'the append made from the clock');
  assert.equal(got.read.ok, true);
  assert.equal(got.after, 'from_the_clock', 'the next read sees it');
  assert.ok(got.ms < 5_000, `the read took ${got.ms} ms`);
  figure(`fake Date appending during a replay: read in ${got.ms} ms, its append landed`);
});

test('getters and toJSON in an event may call the store appending it', async () => {
  const got = await probe({ scenario: 'reentrantCallbacks', impl: 'native' });
  for (const r of got.results) assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(got.results.map((r) => r.value), ['from_a_getter', 'generating', [1]]);
  assert.deepEqual(got.events.map((e) => e.type + (e.phase ? `:${e.phase}` : '')),
    ['generate', 'agent_phase:from_a_getter', 'agent_phase:from_toJSON', 'checkpoint:generating', 'variant_mounted']);
  // The journal is the truth: the append made from inside toJSON is in the
  // final state (the old module's in-memory state loses it, see RELIABILITY.md).
  assert.equal(got.final.generationPhase, 'from_toJSON');
  assert.equal(got.final.phase, 'generating');
  assert.deepEqual(got.final.mountedVariants, [1]);
});

test('a worker terminated during flush() never leaves a snapshot file built from failed calls', async () => {
  const rounds = 20;
  const got = await probe({ scenario: 'terminatedFlush', impl: 'native', rounds, lines: 20_000 });
  assert.equal(got.wrong, 0, JSON.stringify(got));
  assert.equal(got.absent + got.complete, rounds, JSON.stringify(got));
  figure(`worker terminated during flush: ${rounds} rounds over ${got.flushMs} ms flushes, ${got.absent} wrote nothing, ${got.complete} wrote the complete file, 0 wrong`);
});

test('a journal of many bad lines replays under --max-old-space-size=128', async () => {
  const lines = 300_000;
  const nodeArgs = ['--max-old-space-size=128'];
  const got = await probe({ scenario: 'badLineStorm', impl: 'native', lines }, { nodeArgs });
  assert.equal(got.diagnostics, lines);
  assert.equal(got.last.error, 'journal_parse_failed');
  assert.equal(got.last.line, lines);
  const refPath = referenceModulePath();
  if (!refPath) return;
  const want = await probe({ scenario: 'badLineStorm', impl: 'ref', refPath, lines }, { nodeArgs });
  assert.deepEqual(got.last, want.last);
  const ratio = got.maxRssKb / want.maxRssKb;
  figure(`${lines.toLocaleString('en-US')} bad lines: peak RSS ${Math.round(got.maxRssKb / 1024)} MB, old module ${Math.round(want.maxRssKb / 1024)} MB (${ratio.toFixed(2)}x)`);
});

test('functions kept for events are released once no snapshot holds them: the heap stays flat', async () => {
  const appends = 20_000;
  const got = await probe({ scenario: 'keptRelease', impl: 'native', appends }, { nodeArgs: ['--expose-gc'] });
  assert.equal(got.lastHasFunction, true, 'the current snapshot still hands back its function');
  assert.ok(got.growthMb < 10, `heap grew ${got.growthMb.toFixed(1)} MB over ${appends * 0.9} appends`);
  figure(`${appends.toLocaleString('en-US')} appends of events carrying a function: heap grew ${got.growthMb.toFixed(1)} MB after the first tenth`);
});
