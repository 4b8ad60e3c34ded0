'use strict';
// The addon with some of its rules changed, as a core with other rules would
// answer: the CLI loads it unchanged, through QUIVER_LIVE_NATIVE_BINARY (which
// binding.js requires whatever it names). QLN_REAL_BINARY is the addon;
// QLN_CHANGED_RULES (JSON) says what differs:
//   lock: { verdict, stale }       judgeLock's answer for every lock
//   lockLimitMs                    LOCK_UNREADABLE_STALE_MS
//   distrust: [{ rule, found }]    judgeSnapshotFile's answer for every file
//   staged: verdict                stagedFileVerdict's answer for every staged file
//   stagedMinAgeMs                 layout(root).stagedMinAgeMs
// Everything else is the addon's own.

const real = require(process.env.QLN_REAL_BINARY);
const rules = JSON.parse(process.env.QLN_CHANGED_RULES);

const changed = Object.create(real);
if (rules.lock) changed.judgeLock = () => ({ ...rules.lock });
if (rules.lockLimitMs !== undefined) changed.LOCK_UNREADABLE_STALE_MS = rules.lockLimitMs;
if (rules.distrust) changed.judgeSnapshotFile = () => rules.distrust.map((d) => ({ ...d }));
if (rules.staged) changed.stagedFileVerdict = (file) => (real.stagedFileVerdict(file) === null ? null : rules.staged);
if (rules.stagedMinAgeMs !== undefined) changed.layout = (root) => ({ ...real.layout(root), stagedMinAgeMs: rules.stagedMinAgeMs });

module.exports = changed;
