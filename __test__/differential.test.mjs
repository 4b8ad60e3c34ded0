// Differential tests: the package must behave exactly like the old JS
// session store (return values, thrown errors, bytes on disk).
//
// (a) Replays the committed fixtures (__test__/fixtures/differential, produced
//     by running the reference) against require('../index.js').
// (b) With QUIVER_REFERENCE_DIR set, runs fresh seeded sequences live against
//     both implementations, plus cross-reading and mixed-store runs.
//     DIFF_CASES (default 50 per tier) and DIFF_SEED tune it. The default
//     seed is fixed: some adversarial sequences make the old module itself run
//     out of JS heap (it does against a second copy of itself too, e.g.
//     adversarial seed 1563369779), which aborts this whole file, so a random
//     default made the suite fail about one run in eight. DIFF_SEED=random
//     picks one (printed); `npm run fuzz` covers wider seed ranges.

import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPackage, loadReference, PACKAGE_DIR } from './support/impls.mjs';
import { unpackFixture } from './support/fixture.mjs';
import { runSequence, compareTranscripts, allDifferences, formatMismatch } from './support/transcript.mjs';
import { compareLive } from './support/live.mjs';
import { TIERS } from './support/gen.mjs';
import { referenceVocabulary } from './support/vocabulary.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE_DIR = path.join(here, 'fixtures', 'differential');
const FIXTURE_NAME = /^(realistic|adversarial)-(\d+)\.json$/;

function fixtureNames() {
  if (!fs.existsSync(FIXTURE_DIR)) return [];
  return fs.readdirSync(FIXTURE_DIR)
    .filter((n) => FIXTURE_NAME.test(n))
    .sort((a, b) => {
      const [, ta, sa] = a.match(FIXTURE_NAME);
      const [, tb, sb] = b.match(FIXTURE_NAME);
      return ta === tb ? Number(sa) - Number(sb) : ta < tb ? 1 : -1;
    });
}

function loadCandidate() {
  try {
    return { create: loadPackage() };
  } catch (err) {
    return { error: err };
  }
}

test('differential fixtures: the package reproduces the reference transcripts', async (t) => {
  const names = fixtureNames();
  assert.ok(names.length > 0, `no fixtures in ${FIXTURE_DIR}`);
  const { create, error } = loadCandidate();
  if (error) assert.fail(`cannot load the package entry ../index.js: ${error.message}`);

  let ops = 0;
  for (const name of names) {
    await t.test(name, () => {
      const { seq, expected } = unpackFixture(JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, name), 'utf8')));
      ops += seq.ops.length;
      const actual = runSequence(create, seq);
      const mismatch = compareTranscripts(expected, actual);
      if (mismatch) {
        const more = allDifferences(expected, actual, 6).slice(1)
          .map((d) => `    op #${d.index} (${d.op}) ${d.field}: ${d.detail}`);
        const report = formatMismatch({ label: `fixture ${name}`, seed: seq.seed, tier: seq.tier, mismatch, ops: seq.ops })
          + (more.length ? '\n  further differences:\n' + more.join('\n') : '');
        console.error(report);
        assert.fail(report);
      }
    });
  }
  t.diagnostic(`${names.length} fixtures, ${ops} ops replayed`);
});

/** Seeds DEFAULT_LIVE_SEED.. +49 of both tiers: checked to stay within the old module's heap. */
const DEFAULT_LIVE_SEED = 20261130;

test('live differential against the reference (QUIVER_REFERENCE_DIR)', async (t) => {
  if (!process.env.QUIVER_REFERENCE_DIR) {
    const message = 'reference comparison skipped: QUIVER_REFERENCE_DIR not set';
    console.log(message);
    t.skip(message);
    return;
  }
  const reference = await loadReference(0);
  const { create: candidate, error } = loadCandidate();
  if (error) assert.fail(`cannot load the package entry ../index.js: ${error.message}`);

  // The committed fixtures must still be what the reference produces here
  // (catches a changed reference checkout or Node version).
  await t.test('reference still reproduces the committed fixtures', () => {
    for (const name of fixtureNames()) {
      const { seq, expected } = unpackFixture(JSON.parse(fs.readFileSync(path.join(FIXTURE_DIR, name), 'utf8')));
      const mismatch = compareTranscripts(expected, runSequence(reference, seq));
      if (mismatch) assert.fail(formatMismatch({ label: `stale fixture ${name} (regenerate with gen-differential.mjs)`, seed: seq.seed, tier: seq.tier, mismatch, ops: seq.ops }));
    }
  });

  const vocabulary = await referenceVocabulary();
  const cases = Number(process.env.DIFF_CASES ?? 50);
  const base = process.env.DIFF_SEED === 'random'
    ? (Math.floor(Math.random() * 0x7fffffff) + 1000) >>> 0
    : Number(process.env.DIFF_SEED ?? DEFAULT_LIVE_SEED) >>> 0;
  const banner = `live differential: ${cases} sequences per tier from seed ${base} (reproduce with DIFF_SEED=${base} DIFF_CASES=${cases})`;
  console.log(banner);
  t.diagnostic(banner);

  let sequences = 0;
  let ops = 0;
  let checks = 0;
  let agreements = 0;
  for (const tier of TIERS) {
    for (let i = 0; i < cases; i++) {
      const seed = (base + i) >>> 0;
      await t.test(`${tier} seed ${seed}`, () => {
        const r = compareLive({ tier, seed, reference, candidate, options: { vocabulary, types: path.join(PACKAGE_DIR, 'index.d.ts') } });
        sequences++;
        ops += r.ops;
        checks += r.checks;
        agreements += r.agreements;
        if (r.mismatches.length) {
          const report = r.mismatches.map((m) => m.report).join('\n')
            + `\n  reproduce: node scripts/fuzz.mjs --tier ${tier} --seed ${seed} --cases 1`;
          console.error(report);
          assert.fail(report);
        }
      });
    }
  }
  t.diagnostic(`${sequences} sequences, ${ops} ops, ${agreements}/${checks} checks agreed`);
});
