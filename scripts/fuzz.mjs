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
//   --impl FILE     candidate module (default ./index.js of this package);
//                   a CommonJS one's index.d.ts beside it must declare every
//                   key the old module's snapshots all hold
//   --self          compare the reference with a second instance of itself
//                   (validates the harness; needs no native build; a getter
//                   that appends while its event is handled differs then:
//                   the old module does not serialize appends)
//   --max-failures N  stop after N mismatching sequences (default 10)
//   --torn-append   let the store append right after a raw line left without
//                   newline (the old module glues the two; the port must not,
//                   so this is expected to report mismatches)
//   --identity      also compare identity: a copy where the old module returns
//                   the caller's own object (by reference) is a mismatch
//   --quiet         print one line per mismatching sequence, not its report
//   --no-shrink     print a mismatching sequence as generated; by default the
//                   first 3 are shrunk first (see __test__/support/shrink.mjs):
//                   fast-check leaves out operations and event members while
//                   the same check still fails the same way
//   --focus T,U     send events of these types more often (about 4 in 10),
//                   with the fields their cases read more often, and corrupt
//                   the snapshot fields those cases read more often. Default:
//                   the types whose `case` runs different code in the
//                   reference than in the version this package implements
//                   (IMPLEMENTED in scripts/upstream-check.mjs, read from the
//                   reference's git history), so a port is checked where it
//                   changed; `--focus none` for no focus
//   --since DIR     compare the reference's cases with this checkout's (or
//                   session-store.mjs file's) for the default focus, instead
//                   of the implemented commit from the reference's history
//   --classes A,B   draw the values of reducer-read fields from these classes
//                   only (see VALUE_CLASSES in __test__/support/gen.mjs)
//   --coverage-json FILE  write the coverage table (below) as JSON too
//   --chunk N       run N sequences per tier in each child process (default
//                   100; 0: all in this process), so that a sequence that
//                   exhausts the heap (the old module can, on big strings)
//                   costs its chunk, reported with its seeds, not the run
//
// Prints sequences, operations and checks compared and agreements, the
// mismatches grouped by class (check, field, path with indices dropped), and
// the generator's coverage: per event type of the old module, each field its
// reducer reads, how many sequences carried it and with which classes of
// value; and per snapshot field, the values snapshot files were corrupted
// with. Exits 1 on any mismatch, printing the seed to reproduce it.

import fs from 'node:fs';
import os from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadPackage, loadReference, PACKAGE_DIR, referenceModulePath } from '../__test__/support/impls.mjs';
import { checkLive, compareLive } from '../__test__/support/live.mjs';
import { TIERS, VALUE_CLASSES } from '../__test__/support/gen.mjs';
import { changedCases, referenceVocabulary } from '../__test__/support/vocabulary.mjs';
import { shrinkSequence } from '../__test__/support/shrink.mjs';
import { formatMismatch, showEncoded } from '../__test__/support/transcript.mjs';
import { IMPLEMENTED } from './upstream-check.mjs';

function usage(msg) {
  if (msg) console.error(msg);
  console.error('usage: node scripts/fuzz.mjs --cases N --seed S [--tier realistic|adversarial|both] [--ops N] [--impl FILE] [--self] [--max-failures N] [--torn-append] [--identity] [--quiet] [--no-shrink] [--classes A,B] [--focus T,U|none] [--since DIR] [--coverage-json FILE] [--chunk N]');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { cases: 100, seed: undefined, tier: 'both', ops: 30, impl: null, self: false, maxFailures: 10, tornAppend: false,
    identity: false, quiet: false, shrink: true, coverageJson: null, classes: null, focus: undefined, since: null, chunk: 100, stateOut: null };
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
    else if (a === '--identity') args.identity = true;
    else if (a === '--quiet') args.quiet = true;
    else if (a === '--classes') args.classes = val().split(',');
    else if (a === '--focus') {
      const types = val();
      args.focus = types === 'none' ? null : types.split(',');
    }
    else if (a === '--since') args.since = val();
    else if (a === '--no-shrink') args.shrink = false;
    else if (a === '--chunk') args.chunk = Number(val());
    else if (a === '--state-out') args.stateOut = val();
    else if (a === '--coverage-json') args.coverageJson = val();
    else if (a === '--max-failures') args.maxFailures = Number(val());
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (!Number.isInteger(args.cases) || args.cases < 1) usage('--cases must be a positive integer');
  if (args.seed !== undefined && !Number.isInteger(args.seed)) usage('--seed must be an integer');
  if (!['realistic', 'adversarial', 'both'].includes(args.tier)) usage('--tier must be realistic, adversarial or both');
  const known = new Set(Object.values(VALUE_CLASSES).flat());
  if (args.classes?.some((c) => !known.has(c))) usage(`--classes: one of ${[...known].join(', ')}`);
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!process.env.QUIVER_REFERENCE_DIR) usage('QUIVER_REFERENCE_DIR must point at a checkout of the reference (pbakaus/impeccable)');
  const reference = await loadReference(0);
  let candidate;
  let candidateName;
  let types;
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
    types = path.join(path.dirname(entry), 'index.d.ts');
  }
  // The old module's event types and fields drive the generator.
  const vocabulary = await referenceVocabulary();
  const base = (args.seed ?? Math.floor(Math.random() * 0x7fffffff)) >>> 0;
  const tiers = args.tier === 'both' ? TIERS : [args.tier];
  if (args.focus === undefined) {
    const derived = changedFocus(args.since);
    console.log(derived.note);
    args.focus = derived.types?.length ? derived.types : null;
  }
  console.log(`fuzz: ${candidateName} vs reference, tiers ${tiers.join('+')}, ${args.cases} sequences per tier from seed ${base}, ${args.ops} ops each`
    + `${args.focus ? `, focus ${args.focus.join(',')}` : ''}`);

  const totals = { sequences: 0, ops: 0, checks: 0, agreements: 0, failed: [], known: {} };
  const coverage = coverageTable(vocabulary, tiers);
  const classes = mismatchClasses();
  const started = Date.now();
  if (args.chunk > 0 && args.cases > args.chunk && !args.stateOut) {
    runChunks(args, base, { totals, coverage, classes });
  } else {
    await runHere(args, base, tiers, { reference, candidate, vocabulary, types }, { totals, coverage, classes });
  }
  if (args.stateOut) {
    fs.writeFileSync(args.stateOut, JSON.stringify({ totals, coverage: coverage.json(), classes: classes.json() }));
    return;
  }
  report(args, started, { totals, coverage, classes });
}

/**
 * The default focus: the event types whose case runs different code in the
 * reference than in the version this package implements, read from the
 * reference's own git history (or from `since`). `{ types, note }`; `types`
 * is null when there is nothing to compare with.
 */
function changedFocus(since) {
  const file = referenceModulePath();
  const after = fs.readFileSync(file, 'utf8');
  let before;
  let against;
  if (since) {
    const earlier = referenceModulePath(since);
    before = fs.readFileSync(earlier, 'utf8');
    against = earlier;
  } else {
    against = `${IMPLEMENTED.commit.slice(0, 7)}, the version this package implements`;
    try {
      before = execFileSync('git', ['-C', path.dirname(file), 'show', `${IMPLEMENTED.commit}:./${path.basename(file)}`],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
    } catch {
      return { types: null, note: `focus: none (${file} is not in a git clone holding ${IMPLEMENTED.commit.slice(0, 7)}: --since DIR names a checkout to compare its cases with, --focus the types)` };
    }
  }
  const types = changedCases(before, after);
  return {
    types,
    note: types.length
      ? `focus: ${types.join(', ')} (their cases differ from ${against}; --focus T,U or none to choose)`
      : `focus: none (applyEvent's cases are those of ${against})`,
  };
}

/** Each chunk of seeds in a child process; their counts are added up here. */
function runChunks(args, base, { totals, coverage, classes }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qln-fuzz-'));
  try {
    for (let first = 0; first < args.cases; first += args.chunk) {
      const n = Math.min(args.chunk, args.cases - first);
      const stateFile = path.join(dir, `chunk-${first}.json`);
      const own = ['--cases', '--seed', '--chunk', '--coverage-json', '--focus', '--since'];
      const childArgs = [...process.argv.slice(2).filter((a, i, all) => !own.includes(a) && !own.includes(all[i - 1])),
        '--cases', String(n), '--seed', String((base + first) >>> 0), '--state-out', stateFile, '--max-failures', '1000000',
        '--focus', args.focus ? args.focus.join(',') : 'none'];
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...childArgs], { stdio: ['ignore', 'inherit', 'inherit'] });
      if (!fs.existsSync(stateFile)) {
        const what = `chunk of seeds ${base + first}..${base + first + n - 1} ended without its results (${r.signal ?? `exit ${r.status}`})`;
        console.log(`harness crash: ${what}`);
        totals.failed.push({ tier: 'both', seed: `${base + first}..${base + first + n - 1}` });
        totals.checks++;
        classes.add({ label: 'harness crash', mismatch: { op: 'chunk', field: 'process', detail: 'ended without results' } }, 'both', base + first);
        continue;
      }
      const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
      for (const k of ['sequences', 'ops', 'checks', 'agreements']) totals[k] += state.totals[k];
      totals.failed.push(...state.totals.failed);
      for (const [name, seeds] of Object.entries(state.totals.known)) (totals.known[name] ??= []).push(...seeds);
      coverage.merge(state.coverage);
      classes.merge(state.classes);
      if (totals.failed.length >= args.maxFailures) {
        console.log(`stopping after ${totals.failed.length} failing sequences`);
        break;
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runHere(args, base, tiers, { reference, candidate, vocabulary, types }, { totals, coverage, classes }) {
  const liveOptions = { ops: args.ops, tornAppend: args.tornAppend, vocabulary, identity: args.identity, valueClasses: args.classes, focusTypes: args.focus, types };
  let lastProgress = Date.now();
  let shrunk = 0;
  outer:
  for (let i = 0; i < args.cases; i++) {
    for (const tier of tiers) {
      const seed = (base + i) >>> 0;
      let r;
      try {
        r = compareLive({ tier, seed, reference, candidate, options: liveOptions });
      } catch (err) {
        // A harness crash is a failure too, with the seed to reproduce it.
        r = { tier, seed, ops: 0, checks: 1, agreements: 0, mismatches: [{ report: `harness error tier=${tier} seed=${seed}: ${err.stack}` }], known: [] };
      }
      // Let the event loop turn: Node runs native finalizers (which free the
      // stores of finished sequences) only between turns.
      await new Promise((resolve) => setImmediate(resolve));
      totals.sequences++;
      totals.ops += r.ops;
      totals.checks += r.checks;
      totals.agreements += r.agreements;
      coverage.add(tier, r.coverage);
      for (const m of r.mismatches) classes.add(m, tier, seed);
      for (const name of new Set(r.known.map((k) => k.known))) (totals.known[name] ??= []).push(`${tier}:${seed}`);
      if (r.mismatches.length) {
        totals.failed.push({ tier, seed });
        if (args.quiet) {
          console.log(`mismatch tier=${tier} seed=${seed}: ${r.mismatches.map((m) => classOf(m)).join('; ')}`);
          for (const m of r.mismatches.filter((x) => !x.mismatch)) console.log(`  ${m.report.split('\n').slice(0, 3).join('\n  ')}`);
        }
        else for (const m of r.mismatches) console.log(m.report);
        const first = r.mismatches.find((m) => m.mismatch);
        if (args.shrink && first && r.seq && shrunk++ < 3) console.log(shrunkReport(r.seq, first, { reference, candidate, options: liveOptions }));
        const flags = `${args.ops !== 30 ? ` --ops ${args.ops}` : ''}${args.self ? ' --self' : ''}${args.tornAppend ? ' --torn-append' : ''}`
          + `${args.identity ? ' --identity' : ''}${args.classes ? ` --classes ${args.classes.join(',')}` : ''}${args.focus ? ` --focus ${args.focus.join(',')}` : ''}`
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
}

function report(args, started, { totals, coverage, classes }) {
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  coverage.print();
  if (args.coverageJson) fs.writeFileSync(args.coverageJson, JSON.stringify(coverage.json(), null, 2) + '\n');
  classes.print();
  for (const [name, seeds] of Object.entries(totals.known)) {
    console.log(`known difference, not counted as a mismatch: ${name}: ${seeds.length} sequences (${seeds.slice(0, 3).join(' ')})`);
  }
  console.log(`compared ${totals.sequences} sequences, ${totals.ops} operations (each run, cross-read both ways and mixed): `
    + `${totals.agreements}/${totals.checks} checks agreed, ${totals.failed.length} sequences mismatched, ${secs}s`);
  if (totals.failed.length) {
    console.log(`mismatching seeds: ${totals.failed.map((f) => `${f.tier}:${f.seed}`).join(' ')}`);
    process.exit(1);
  }
}

/**
 * Per tier, type and field: sequences that carried the field, and per value
 * class how many of those. Fields are the old module's (the vocabulary's
 * caseFields), so a field the generator never sends shows as 0.
 */
function coverageTable(vocabulary, tiers) {
  const table = {};
  for (const tier of tiers) {
    table[tier] = { sequences: 0, types: {} };
    const rows = { ...vocabulary.caseFields, '<snapshot file>': [...vocabulary.fields, ...vocabulary.addedFields] };
    for (const [type, fields] of Object.entries(rows)) {
      table[tier].types[type] = Object.fromEntries(fields.map((f) => [f, { sequences: 0, classes: Object.create(null) }]));
    }
  }
  return {
    add(tier, seqCoverage = {}) {
      const t = table[tier];
      t.sequences++;
      for (const [type, fields] of Object.entries(seqCoverage)) {
        for (const [field, cls] of Object.entries(fields)) {
          const row = (t.types[type] ??= {})[field] ??= { sequences: 0, classes: Object.create(null) };
          row.sequences++;
          for (const c of cls) row.classes[c] = (row.classes[c] ?? 0) + 1;
        }
      }
    },
    json: () => table,
    merge(other) {
      for (const [tier, t] of Object.entries(other)) {
        table[tier].sequences += t.sequences;
        for (const [type, fields] of Object.entries(t.types)) {
          for (const [field, row] of Object.entries(fields)) {
            const mine = (table[tier].types[type] ??= {})[field] ??= { sequences: 0, classes: Object.create(null) };
            mine.sequences += row.sequences;
            for (const [c, n] of Object.entries(row.classes)) mine.classes[c] = (mine.classes[c] ?? 0) + n;
          }
        }
      }
    },
    print() {
      for (const [tier, t] of Object.entries(table)) {
        console.log(`coverage, ${tier} tier (${t.sequences} sequences): type | field the old module reads | sequences carrying it | by value class`);
        for (const [type, fields] of Object.entries(t.types)) {
          for (const [field, row] of Object.entries(fields)) {
            const cls = Object.entries(row.classes).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ');
            console.log(`  ${type} | ${field} | ${row.sequences} | ${cls}`);
          }
        }
      }
    },
  };
}

/**
 * The smallest sequence fast-check finds that still fails `m`'s check with
 * a mismatch of the same class, printed whole.
 */
function shrunkReport(seq, m, impls) {
  const started = Date.now();
  const want = classOf(m);
  const small = shrinkSequence(seq, (candidate) => {
    let mismatch;
    try {
      mismatch = checkLive(m.label, candidate, impls).mismatch;
    } catch {
      return false;
    }
    return !!mismatch && classOf({ label: m.label, mismatch }) === want;
  });
  const mismatch = checkLive(m.label, small.seq, impls).mismatch;
  const lines = [`  shrunk: ${seq.ops.length} ops to ${small.seq.ops.length} (${small.runs} candidates run, ${((Date.now() - started) / 1000).toFixed(1)}s); still ${want}`];
  lines.push(formatMismatch({ label: `  shrunk ${m.label}`, seed: seq.seed, tier: seq.tier, mismatch, ops: small.seq.ops }).replace(/^/gm, '  '));
  for (const [i, op] of small.seq.ops.entries()) {
    const text = showEncoded(op);
    lines.push(`    #${i} ${text.length > 600 ? `${text.slice(0, 600)}… (${text.length} chars)` : text}`);
  }
  return lines.join('\n');
}

/** A mismatch's class: the check, the field compared, the path with indices and ids dropped. */
function classOf(m) {
  if (!m.mismatch) return 'harness error';
  if (m.label === 'harness crash') return 'harness crash | chunk | process | ended without results';
  const detail = String(m.mismatch.detail)
    .replace(/\[\d+\]/g, '[]')
    .replace(/^file \S+?([^/\s]*?)(\.snapshot\.json|\.jsonl)/, 'file <id>$2')
    .replace(/:.*$/s, '');
  const op = String(m.mismatch.op).replace(/\(.*\)$/, '');
  return `${m.label.split(' ')[0]} | ${op} | ${m.mismatch.field} | ${detail}`;
}

function mismatchClasses() {
  const seen = new Map();
  return {
    add(m, tier, seed) {
      const c = classOf(m);
      const row = seen.get(c) ?? { count: 0, seeds: [] };
      row.count++;
      if (row.seeds.length < 3) row.seeds.push(`${tier}:${seed}`);
      seen.set(c, row);
    },
    json: () => [...seen],
    merge(entries) {
      for (const [c, row] of entries) {
        const mine = seen.get(c) ?? { count: 0, seeds: [] };
        mine.count += row.count;
        mine.seeds.push(...row.seeds.slice(0, 3 - mine.seeds.length));
        seen.set(c, mine);
      }
    },
    print() {
      if (!seen.size) return;
      console.log('mismatch classes: check | op | field | where | count | first seeds');
      for (const [c, row] of [...seen].sort((a, b) => b[1].count - a[1].count)) console.log(`  ${c} | ${row.count} | ${row.seeds.join(' ')}`);
    },
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
