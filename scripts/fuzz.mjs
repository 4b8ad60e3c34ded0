#!/usr/bin/env node
// Long differential runs: the package against the old JS session store.
//
//   QUIVER_REFERENCE_DIR=/path/to/impeccable node scripts/fuzz.mjs --cases 500 --seed 1 [--tier realistic|adversarial|both]
//
// Options:
//   --cases N       sequences per tier (default 100)
//   --seed S        first seed (default: random, printed); seeds S..S+N-1 are used
//   --tier T        realistic, adversarial or both (default both)
//   --ops N         operations per sequence (default 30)
//   --impl FILE     candidate module (default ./index.js of this package)
//   --self          compare the reference with a second instance of itself
//                   (validates the harness; needs no native build)
//   --max-failures N  stop after N mismatching sequences (default 10)
//   --torn-append   let the store append right after a raw line left without
//                   newline (the old module glues the two; the port must not,
//                   so this is expected to report mismatches)
//
// Prints sequences, operations and checks compared and agreements; exits 1 on
// any mismatch, printing the seed to reproduce it.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPackage, loadReference, PACKAGE_DIR } from '../__test__/support/impls.mjs';
import { compareLive } from '../__test__/support/live.mjs';
import { TIERS } from '../__test__/support/gen.mjs';
import { referenceVocabulary } from '../__test__/support/vocabulary.mjs';

function usage(msg) {
  if (msg) console.error(msg);
  console.error('usage: node scripts/fuzz.mjs --cases N --seed S [--tier realistic|adversarial|both] [--ops N] [--impl FILE] [--self] [--max-failures N] [--torn-append]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { cases: 100, seed: undefined, tier: 'both', ops: 30, impl: null, self: false, maxFailures: 10, tornAppend: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--cases') args.cases = Number(val());
    else if (a === '--seed') args.seed = Number(val());
    else if (a === '--tier') args.tier = val();
    else if (a === '--ops') args.ops = Number(val());
    else if (a === '--impl') args.impl = val();
    else if (a === '--self') args.self = true;
    else if (a === '--torn-append') args.tornAppend = true;
    else if (a === '--max-failures') args.maxFailures = Number(val());
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (!Number.isInteger(args.cases) || args.cases < 1) usage('--cases must be a positive integer');
  if (args.seed !== undefined && !Number.isInteger(args.seed)) usage('--seed must be an integer');
  if (!['realistic', 'adversarial', 'both'].includes(args.tier)) usage('--tier must be realistic, adversarial or both');
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!process.env.QUIVER_REFERENCE_DIR) usage('QUIVER_REFERENCE_DIR must point at a checkout of the reference (pbakaus/impeccable)');
  const reference = await loadReference(0);
  let candidate;
  let candidateName;
  if (args.self) {
    candidate = await loadReference(1);
    candidateName = 'reference (second instance)';
  } else if (args.impl && /\.mjs$/.test(args.impl)) {
    candidate = (await import(pathToFileURL(path.resolve(args.impl)).href)).createLiveSessionStore;
    candidateName = args.impl;
  } else {
    const entry = args.impl ? path.resolve(args.impl) : path.join(PACKAGE_DIR, 'index.js');
    candidate = loadPackage(entry);
    candidateName = path.relative(process.cwd(), entry) || entry;
  }
  // The old module's event types and fields drive the generator.
  const vocabulary = await referenceVocabulary();
  const base = (args.seed ?? Math.floor(Math.random() * 0x7fffffff)) >>> 0;
  const tiers = args.tier === 'both' ? TIERS : [args.tier];
  console.log(`fuzz: ${candidateName} vs reference, tiers ${tiers.join('+')}, ${args.cases} sequences per tier from seed ${base}, ${args.ops} ops each`);

  const totals = { sequences: 0, ops: 0, checks: 0, agreements: 0, failed: [] };
  const started = Date.now();
  let lastProgress = started;
  outer:
  for (let i = 0; i < args.cases; i++) {
    for (const tier of tiers) {
      const seed = (base + i) >>> 0;
      let r;
      try {
        r = compareLive({ tier, seed, reference, candidate, options: { ops: args.ops, tornAppend: args.tornAppend, vocabulary } });
      } catch (err) {
        // A harness crash is a failure too, with the seed to reproduce it.
        r = { tier, seed, ops: 0, checks: 1, agreements: 0, mismatches: [{ report: `harness error tier=${tier} seed=${seed}: ${err.stack}` }] };
      }
      // Let the event loop turn: Node runs native finalizers (which free the
      // stores of finished sequences) only between turns.
      await new Promise((resolve) => setImmediate(resolve));
      totals.sequences++;
      totals.ops += r.ops;
      totals.checks += r.checks;
      totals.agreements += r.agreements;
      if (r.mismatches.length) {
        totals.failed.push({ tier, seed });
        for (const m of r.mismatches) console.log(m.report);
        const flags = `${args.ops !== 30 ? ` --ops ${args.ops}` : ''}${args.self ? ' --self' : ''}${args.tornAppend ? ' --torn-append' : ''}`
          + `${args.impl ? ` --impl ${args.impl}` : ''}`;
        console.log(`  reproduce: node scripts/fuzz.mjs --tier ${tier} --seed ${seed} --cases 1${flags}`);
        if (totals.failed.length >= args.maxFailures) {
          console.log(`stopping after ${totals.failed.length} failing sequences`);
          break outer;
        }
      }
      if (Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        console.log(`  … ${totals.sequences} sequences, ${totals.ops} ops, ${totals.failed.length} failing`);
      }
    }
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`compared ${totals.sequences} sequences, ${totals.ops} operations (each run, cross-read both ways and mixed): `
    + `${totals.agreements}/${totals.checks} checks agreed, ${totals.failed.length} sequences mismatched, ${secs}s`);
  if (totals.failed.length) {
    console.log(`mismatching seeds: ${totals.failed.map((f) => `${f.tier}:${f.seed}`).join(' ')}`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
