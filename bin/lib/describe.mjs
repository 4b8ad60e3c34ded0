// Sessions, events and diagnostics in a few readable words.

import { binding } from './project.mjs';
import { ageSince, c, cell, formatAge, sanitize, truncate } from './output.mjs';

export const phaseStyle = (phase) => {
  if (phase === 'agent_error') return c.red;
  if (phase === 'variants_ready' || phase === 'steer_done') return c.green;
  if (/_requested$|_required$/.test(phase)) return c.yellow;
  return null;
};

export const renderStyle = (state) => (state === 'failed' ? c.red : state === 'mounted' ? c.green : state === 'pending' ? c.yellow : null);

const SUMMARY_KEYS = [
  'phase', 'count', 'variant', 'variantId', 'arrivedVariants', 'revision', 'revisionDomain', 'reason',
  'owner', 'action', 'carbonize', 'sourceEventType', 'durationMs', 'pageUrl', 'sourceFile', 'file',
  'previewFile', 'previewMode', 'url', 'error', 'message',
];

function summaryValue(value) {
  if (typeof value === 'string') return /^[\w./:@#?=&%+~-]+$/.test(value) ? value : JSON.stringify(value);
  let text;
  try { text = JSON.stringify(value); } catch { text = String(value); }
  return truncate(text ?? String(value), 40);
}

/** One line about an event: its most telling fields (never its token). */
export function summarize(event) {
  if (!event || typeof event !== 'object') return '';
  const parts = [];
  for (const key of SUMMARY_KEYS) {
    if (event[key] !== undefined && event[key] !== null) parts.push(`${key}=${summaryValue(event[key])}`);
  }
  if (Array.isArray(event.waivers)) parts.push(`waivers=${event.waivers.length}`);
  if (event.plan !== undefined && event.plan !== null) parts.push(`plan=${summaryValue(event.plan)}`);
  if (event.paramValues && typeof event.paramValues === 'object') parts.push(`params=${Object.keys(event.paramValues).length}`);
  return sanitize(truncate(parts.join(' '), 110));
}

function describeTime(value) {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? cell(value) : d.toISOString();
  }
  return cell(value);
}

function describeDiagnostic(d) {
  if (!d || typeof d !== 'object') return cell(d);
  const { error, ...rest } = d;
  const fields = Object.entries(rest).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${summaryValue(v)}`);
  return sanitize(truncate(`${cell(error)} ${fields.join(' ')}`.trim(), 140));
}

/** The last ten diagnostics as lines, with a note of how many came before. */
export function diagnosticLines(diagnostics, more) {
  const lines = diagnostics.slice(-10).map((d) => `  - ${describeDiagnostic(d)}`);
  if (diagnostics.length > 10) lines.push(c.dim(`  (${diagnostics.length - 10} earlier; ${more})`));
  return lines;
}

export function describeSnapshot(s, now) {
  const rows = [];
  const add = (label, value) => rows.push([label, value]);
  const active = !binding().schema().completedPhases.includes(s.phase);
  add('Session', cell(s.id));
  add('Phase', (phaseStyle(s.phase) ?? ((t) => t))(cell(s.phase)) + (active ? '' : c.dim('  (finished)')));
  const mounted = Array.isArray(s.mountedVariants) && s.mountedVariants.length ? ` (variants ${s.mountedVariants.join(', ')} on screen)` : '';
  add('Render', (renderStyle(s.renderState) ?? ((t) => t))(cell(s.renderState)) + mounted);
  add('Updated', s.updatedAt ? `${cell(s.updatedAt)} (${formatAge(ageSince(s.updatedAt, now))} ago)` : '-');
  add('Page', cell(s.pageUrl));
  add('Source', cell(s.sourceFile));
  add('Preview', cell(s.previewFile) + (s.previewMode != null ? ` (${cell(s.previewMode)})` : ''));
  add('Variants', `expected ${cell(s.expectedVariants)}, arrived ${cell(s.arrivedVariants)}, visible ${cell(s.visibleVariant)}`);
  if (s.pendingEvent && typeof s.pendingEvent === 'object') {
    add('Pending', c.cyan(cell(s.pendingEvent.type)) + (s.pendingEventSeq != null ? ` (seq ${cell(s.pendingEventSeq)})` : '') + ' ' + summarize(s.pendingEvent));
  } else {
    add('Pending', '-');
  }
  const generation = [`phase ${cell(s.generationPhase)}`];
  if (s.generationCompletedAt != null) generation.push(`completed ${describeTime(s.generationCompletedAt)}`);
  if (s.generationCanceled) generation.push(`canceled (${cell(s.cancelReason)}) ${describeTime(s.generationCanceledAt)}`);
  add('Generation', generation.join('; '));
  add('Checkpoints', `browser ${cell(s.browserCheckpointRevision)}, publication ${cell(s.publicationCheckpointRevision)}, owner ${cell(s.activeOwner)}`);
  const failures = Array.isArray(s.mountFailures) ? s.mountFailures : [];
  if (failures.length) {
    const last = failures[failures.length - 1] ?? {};
    add('Mount fails', `${failures.length} (last: variant ${cell(last.variant)} ${cell(last.error)})`);
  }
  const artifacts = Array.isArray(s.annotationArtifacts) ? s.annotationArtifacts : [];
  if (artifacts.length) add('Artifacts', artifacts.map((a) => `${cell(a?.type)}: ${cell(a?.path)}`).join(', '));
  if (Array.isArray(s.detectorWaivers)) add('Waivers', String(s.detectorWaivers.length));
  if (s.message !== undefined) add('Message', truncate(cell(s.message), 100));
  const diagnostics = Array.isArray(s.diagnostics) ? s.diagnostics : [];
  add('Diagnostics', diagnostics.length ? c.yellow(String(diagnostics.length)) : '0');
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    ...rows.map(([label, value]) => `${c.bold(label.padEnd(width))}  ${value}`),
    ...diagnosticLines(diagnostics, '--json shows all'),
  ].join('\n');
}
