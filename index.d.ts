// Types of quiver-live-native's API. The `LiveSessionSnapshot` fields are
// checked against the snapshot schema (crates/core/src/session/schema.rs) by
// the `schema_` tests.

/** Options of {@link createLiveSessionStore}. */
export interface LiveSessionStoreOptions {
  /** Where the project root is resolved from (monorepo-aware). Default: `process.cwd()`. */
  cwd?: string
  /** The session used when `appendEvent`, `getSnapshot` or `flush` are not given an id. */
  sessionId?: string
  /** fsync each journal append (and the directory of a new journal) before returning. Default `false`. */
  durable?: boolean
}

/** One journal event as the live server, browser and agent send it. Unknown fields are kept. */
export interface LiveSessionEvent {
  /** Event type: `generate`, `variant_plan`, `detector_waivers`, `agent_phase`, `variants_ready`,
   *  `agent_done`, `variant_mounted`, `variant_mount_failed`, `checkpoint`, `accept`, `accept_intent`,
   *  `manual_edit_apply`, `steer`, `carbonize_cleanup`, `steer_done`, `discard`, `discarded`,
   *  `complete`, `agent_error`; anything else is journaled as `unknown_event_type`. */
  type: string
  /** Session id (`[A-Za-z0-9_-]{1,128}`); defaults to the store's `sessionId`. */
  id?: string
  [field: string]: unknown
}

/** A diagnostic the reducer or the journal replay recorded. */
export interface LiveSessionDiagnostic {
  error:
    | 'journal_parse_failed'
    | 'late_generation_event_ignored'
    | 'checkpoint_after_terminal_ignored'
    | 'stale_checkpoint_ignored'
    | 'malformed_mount_ack'
    | 'carbonize_cleanup_required'
    | 'agent_error'
    | 'unknown_event_type'
    | string
  [field: string]: unknown
}

export interface LiveMountFailure {
  variant: number
  url: string | null
  error: string | null
  at: unknown
}

/** The derived state of one session, field by field as the old module returns it. */
export interface LiveSessionSnapshot {
  id: string
  /** `new`, `generate_requested`, `variants_ready`, `carbonize_required`, `carbonize_cleanup_requested`,
   *  `manual_edit_apply_requested`, `steer_requested`, `steer_done`, `accept_requested`,
   *  `discard_requested`, `discarded`, `completed`, `agent_error`, or a browser-reported phase. */
  phase: string
  pageUrl: unknown
  sourceFile: unknown
  previewFile: unknown
  previewMode: unknown
  expectedVariants: unknown
  /** What the agent published. */
  arrivedVariants: unknown
  visibleVariant: unknown
  paramValues: Record<string, unknown>
  /** `seq` of the event waiting for the agent, or null. */
  pendingEventSeq: unknown
  /** The event waiting for the agent (without its `token`), or null. */
  pendingEvent: Record<string, unknown> | null
  deliveryLease: unknown
  /** Compatibility mirror of `browserCheckpointRevision`. */
  checkpointRevision: unknown
  browserCheckpointRevision: unknown
  publicationCheckpointRevision: unknown
  activeOwner: unknown
  sourceMarkers: Record<string, unknown>
  fallbackMode: unknown
  generationPhase: unknown
  /** Set once generation finished; monotone. */
  generationCompletedAt: unknown
  generationTimings: Record<string, { at: unknown; durationMs: unknown }>
  variantPlan: unknown
  generationCanceled: boolean
  generationCanceledAt: unknown
  cancelReason: 'accept' | 'discard' | null
  annotationArtifacts: Array<{ type: string; path: unknown }>
  /** Variants the browser actually mounted, ascending. */
  mountedVariants: number[]
  /** The last five mount failures. */
  mountFailures: LiveMountFailure[]
  /** `pending`, `mounted`, `failed` or null. */
  renderState: 'pending' | 'mounted' | 'failed' | null
  diagnostics: LiveSessionDiagnostic[]
  updatedAt: unknown
  /** Present after a `detector_waivers` event. */
  detectorWaivers?: unknown[]
  /** Present after a `steer_done` event. */
  message?: unknown
  [field: string]: unknown
}

export interface GetSnapshotOptions {
  /** Also return sessions whose phase is `completed` or `discarded` (otherwise `null`). */
  includeCompleted?: boolean
}

/** The store returned by {@link createLiveSessionStore}. Methods work when destructured. */
export interface LiveSessionStore {
  /** `<root>/.impeccable/live/sessions` */
  readonly rootDir: string
  /** `<root>/.impeccable-live/sessions` (read, and copied forward on first append) */
  readonly legacyRootDir: string
  /** Journals the event (assigning `seq` and `ts`), applies it, refreshes the snapshot file, returns the new snapshot. */
  appendEvent(event: LiveSessionEvent): LiveSessionSnapshot
  /** Whether a journal exists for the id in either directory (false for non-strings). Throws on an invalid id. */
  has(id: unknown): boolean
  /** The current snapshot; `null` for a completed session unless `includeCompleted`. Read-only on disk. */
  getSnapshot(id?: string, opts?: GetSnapshotOptions): LiveSessionSnapshot | null
  /** Replays the journal and rewrites the snapshot file; returns the snapshot. */
  flush(id?: string): LiveSessionSnapshot
  /** Snapshots of every session not completed or discarded, sorted by id. */
  listActiveSessions(): LiveSessionSnapshot[]
}

/** Options of {@link withSourceLockSync}. */
export interface SourceLockOptions {
  /** Where `file` is resolved from and the project root found. Default: `process.cwd()`. */
  cwd?: string
  /** How long to keep retrying a held lock, in ms. Default 0 (fail at once with `SOURCE_LOCKED`). */
  waitMs?: number
  /** Pause between retries, in ms. Default 5. */
  retryMs?: number
}

/** The error thrown when the lock stays held past `waitMs`: `message` is `source_locked`. */
export interface SourceLockedError extends Error {
  code: 'SOURCE_LOCKED'
  lockPath: string
}

/** A read-only `Set` of phase names (the live server calls `.has`; `add`, `delete` and `clear` throw). */
export type PhaseSet = ReadonlySet<string>

/** Creates a session store for the project that `cwd` belongs to, as the old module's `createLiveSessionStore`. */
export declare function createLiveSessionStore(options?: LiveSessionStoreOptions): LiveSessionStore

/** Phases after which late generation events are journaled as diagnostics instead of applied. */
export declare const GENERATION_FENCED_PHASES: PhaseSet

/** Runs `fn` while holding the cross-process lock for `file`; throws a {@link SourceLockedError} once `waitMs` passed. */
export declare function withSourceLockSync<T>(file: string, owner: unknown, fn: () => T, options?: SourceLockOptions): T

/** The lock file guarding `file`: `<root>/.impeccable/live/locks/<24 hex>.lock`. */
export declare function sourceLockPath(file: string, cwd?: string): string
