import fs from 'node:fs';
import path from 'node:path';
import { hexId, sessionEvents, SESSION_KINDS, sessionsDir, journalOf, snapshotOf } from '../lib/events.mjs';
import { project, removeDir, now, usSince, median, alternate, probeFloor, lastAppendOf, NOTES, MISSES, row, fmt, CFG } from '../lib/harness.mjs';

/**
 * The events of a day of `slots` sessions and `ops` timed appends, the same
 * every round (bench/ab.mjs --day times the same day): each slot's lead-in (appended
 * untimed, so the day runs in a steady mix), then the timed stream, and
 * which of its events is a new session's first.
 */
export function dayPlan(slots, ops) {
  let next = 0;
  const state = Array.from({ length: slots }, (_, s) => ({ i: 0, events: null, s }));
  const start = (st) => {
    const id = hexId(100_000 + next);
    st.events = sessionEvents(id, SESSION_KINDS[next % SESSION_KINDS.length]);
    st.i = 0;
    next++;
  };
  const nextEvent = (st) => {
    if (!st.events || st.i >= st.events.length) start(st);
    return st.events[st.i++];
  };
  const leadIn = [];
  for (const st of state) {
    start(st);
    const skip = (st.s * 7) % st.events.length;
    for (let i = 0; i < skip; i++) leadIn.push(nextEvent(st));
  }
  const stream = [];
  const firsts = [];
  for (let op = 0; op < ops; op++) {
    const st = state[op % slots];
    stream.push(nextEvent(st));
    firsts.push(st.i === 1);
  }
  return { leadIn, stream, firsts };
}

/**
 * A server's day: 50 sessions live at once, events round-robin across them,
 * each session a realistic cycle (generate … accept/complete, a steer, or a
 * discard; a finished session's slot starts a new one with a new id). After
 * every append a second store on the same project (another instance, as
 * live-status or a second server would be) reads that session, and every 10
 * appends it lists the active sessions. µs per append, reads included.
 */
export async function run(impls) {
  const slots = CFG.daySessions;
  const ops = CFG.dayOps;
  const day = dayPlan(slots, ops);
  const newSessions = day.firsts.filter(Boolean).length;
  /** A fresh project with every slot part-way through its first session. */
  function setup(mod) {
    const dir = project('day');
    const writer = mod.createLiveSessionStore({ cwd: dir });
    const reader = mod.createLiveSessionStore({ cwd: dir });
    for (const e of day.leadIn) writer.appendEvent(e);
    reader.listActiveSessions();
    return { dir, writer, reader, stream: day.stream };
  }
  const last = {};
  // Where each round's time went, per append, part by part (see `spent`): medians over rounds.
  const parts = {};
  const run = (k) => () => {
    const d = setup(impls[k]);
    const spent = { 'first appends': 0, 'other appends': 0, read: 0, listing: 0 };
    const t0 = now();
    let t = t0;
    const lap = (part) => {
      const at = now();
      spent[part] += Number(at - t);
      t = at;
    };
    for (let op = 0; op < ops; op++) {
      const e = d.stream[op];
      d.writer.appendEvent(e);
      lap(day.firsts[op] ? 'first appends' : 'other appends');
      d.reader.getSnapshot(e.id);
      lap('read');
      if (op % 10 === 9) {
        d.reader.listActiveSessions();
        lap('listing');
      }
    }
    const us = usSince(t0) / ops;
    for (const [part, ns] of Object.entries(spent)) ((parts[k] ??= {})[part] ??= []).push(ns / 1000 / ops);
    last[k] = d.reader.listActiveSessions().map((s) => `${s.id}:${s.phase}`).join(' ');
    removeDir(d.dir);
    return us;
  };
  // The floor's reader half: a stat of the journal and a read of the snapshot
  // file from Rust (probeFloor read), per session of the day's sessions
  // directory once its stream is appended (untimed, natively). Its last
  // append is the sample the append floor and the new sessions' files take.
  const sample = (() => {
    const d = setup(impls.native);
    for (const e of d.stream) d.writer.appendEvent(e);
    const id = d.stream[d.stream.length - 1].id;
    const read = probeFloor('read', { sessions: sessionsDir(d.dir) });
    const last = lastAppendOf(d.dir, id);
    removeDir(d.dir);
    return { ...last, read: read?.read };
  })();
  // The floor's new-session half: a first append creates two files, the
  // journal and the snapshot file (staged and renamed, so no reader sees it
  // half written). They are made in a day's sessions directory, among the
  // lead-in's files, since a file's creation costs more in a fuller
  // directory; amortized over the day's appends.
  const floorCreate = () => {
    const d = setup(impls.native);
    const { line, snapshot } = sample;
    let total = 0n;
    for (let n = 0; n < newSessions; n++) {
      const id = hexId(900_000 + n);
      const staged = path.join(sessionsDir(d.dir), `.${id}.0123456789ab`);
      const t0 = now();
      for (const [file, bytes] of [[journalOf(d.dir, id), line], [staged, snapshot]]) {
        const fd = fs.openSync(file, 'wx');
        fs.writeSync(fd, bytes);
        fs.closeSync(fd);
      }
      fs.renameSync(staged, snapshotOf(d.dir, id));
      total += now() - t0;
    }
    removeDir(d.dir);
    return Number(total) / 1000 / ops;
  };
  const res = await alternate({ native: run('native'), js: impls.js ? run('js') : null, create: floorCreate });
  if (last.js != null && last.native !== last.js) MISSES.push("server's day: the reader's last listing differs between native and old");
  const probe = probeFloor('append', sample);
  const floorValue = probe && sample.read != null ? probe.guarded + sample.read + res.create : null;
  row(`a server's day: ${slots} sessions round-robin, each append read back by a second store, a listing every 10 appends (µs/append)`, {
    old: res.js, native: res.native,
    floor: floorValue != null
      ? `${fmt(floorValue)} (append disk ${fmt(probe.guarded)} + stat & read ${fmt(sample.read)} + new sessions' files ${fmt(res.create)})`
      : `new sessions' files ${fmt(res.create)}`,
    floorValue,
  });
  const split = (k) => (parts[k] ? Object.entries(parts[k]).map(([part, us]) => `${part} ${fmt(median(us))}`).join(' + ') : null);
  NOTES.push(`server's day, µs per append by part (${newSessions} of the ${ops} appends start a session): native ${split('native')}` +
    (parts.js ? `; old ${split('js')}` : '') + '.');
  NOTES.push(`server's day: ${ops} appends per round over ${slots} sessions (kinds in turn: ${SESSION_KINDS.join(', ')}), one fresh project per round, ` +
    `every slot pre-advanced untimed to a different point of its first session; the reader's getSnapshot returns null once a session completes. ` +
    `Floor = probeFloor append (a ${sample.line.length}-byte line, ${sample.snapshot.length}-byte snapshot file) + probeFloor read (a stat of a journal ` +
    `and a read of its snapshot file, from Rust, per session of the day's sessions directory) for each append's read-back + creating each new session's two files (its journal; its snapshot file, staged and renamed) ` +
    `from JavaScript in a sessions directory holding the lead-in's, over all appends; not counted: rendering, building the objects, the listings.`);
}
