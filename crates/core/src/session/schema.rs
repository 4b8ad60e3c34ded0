//! The one table of what a session snapshot is.
//!
//! Everything the old module's `session-store.mjs` says about the shape of a
//! snapshot is written here once: the base fields in the order
//! `baseSnapshot(id)` lists them, what each starts as, how the head of
//! `applyEvent` rebuilds it before every event (`{ ...snapshot, f: ... }`),
//! and its TypeScript type; the fields events add later; the event types
//! the reducer handles; the phases that end a session and the phases that
//! fence late generation events. The base snapshot, its key order, the
//! rebuild, the "already normal" shortcut, the TypeScript snapshot type and
//! the lists the CLI and the test generators use all come from here (the
//! `schema_*` tests hold the copies that cannot be generated to it).
//!
//! Adding a base field is one row of [`snapshot_fields!`].

use crate::js::{JsStr, Object, Value};

/// What a base field holds in `baseSnapshot(id)`.
#[derive(Clone, Copy, Debug)]
pub enum Initial {
    /// The session id.
    Id,
    Text(&'static str),
    Null,
    Zero,
    False,
    EmptyObject,
    EmptyArray,
}

/// How the head of `applyEvent` rebuilds a field before every event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rebuild {
    /// Not named there: `...snapshot` copies it as it is.
    Copied,
    /// `f: { ...(snapshot.f || {}) }`
    ObjectCopy,
    /// `f: [...(snapshot.f || [])]`, which throws for a value that is not
    /// iterable.
    ArrayCopy,
    /// `f: snapshot.f || null`
    OrNull,
    /// `f: snapshot.f ?? null`
    NullishToNull,
    /// `f: entry.ts || new Date().toISOString()`
    EntryTime,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    pub name: &'static str,
    pub initial: Initial,
    pub rebuild: Rebuild,
    /// Its type in `index.d.ts`'s `LiveSessionSnapshot`.
    pub ts_type: &'static str,
}

macro_rules! snapshot_fields {
    ($($field:ident $name:literal: $initial:expr, $rebuild:ident, $ts:literal;)*) => {
        /// A base snapshot field; `Field as usize` is its place in the
        /// snapshot's key order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Field {
            $($field,)*
        }

        pub const FIELD_COUNT: usize = [$($name),*].len();

        /// The rows, in the snapshot's key order.
        pub const FIELDS: [FieldSpec; FIELD_COUNT] = [
            $(FieldSpec { name: $name, initial: { use Initial::*; $initial }, rebuild: Rebuild::$rebuild, ts_type: $ts },)*
        ];

        /// The rows' names as JS strings.
        pub static FIELD_KEYS: [JsStr; FIELD_COUNT] = [$(JsStr::Static($name),)*];

        impl Field {
            pub const ALL: [Field; FIELD_COUNT] = [$(Field::$field,)*];

            /// The field a key names, if it is a base field.
            pub fn by_name(name: &str) -> Option<Field> {
                match name {
                    $($name => Some(Field::$field),)*
                    _ => None,
                }
            }
        }
    };
}

snapshot_fields! {
    Id "id": Id, Copied, "string";
    Phase "phase": Text("new"), Copied, "string";
    PageUrl "pageUrl": Null, Copied, "unknown";
    SourceFile "sourceFile": Null, Copied, "unknown";
    PreviewFile "previewFile": Null, Copied, "unknown";
    PreviewMode "previewMode": Null, Copied, "unknown";
    ExpectedVariants "expectedVariants": Zero, Copied, "unknown";
    ArrivedVariants "arrivedVariants": Zero, Copied, "unknown";
    VisibleVariant "visibleVariant": Null, Copied, "unknown";
    ParamValues "paramValues": EmptyObject, ObjectCopy, "Record<string, unknown>";
    PendingEventSeq "pendingEventSeq": Null, Copied, "unknown";
    PendingEvent "pendingEvent": Null, Copied, "Record<string, unknown> | null";
    DeliveryLease "deliveryLease": Null, Copied, "unknown";
    CheckpointRevision "checkpointRevision": Zero, Copied, "unknown";
    BrowserCheckpointRevision "browserCheckpointRevision": Zero, Copied, "unknown";
    PublicationCheckpointRevision "publicationCheckpointRevision": Zero, Copied, "unknown";
    ActiveOwner "activeOwner": Null, Copied, "unknown";
    SourceMarkers "sourceMarkers": EmptyObject, ObjectCopy, "Record<string, unknown>";
    FallbackMode "fallbackMode": Null, Copied, "unknown";
    GenerationPhase "generationPhase": Null, Copied, "unknown";
    GenerationCompletedAt "generationCompletedAt": Null, Copied, "unknown";
    GenerationTimings "generationTimings": EmptyObject, ObjectCopy, "Record<string, { at: unknown; durationMs: unknown }>";
    VariantPlan "variantPlan": Null, OrNull, "unknown";
    GenerationCanceled "generationCanceled": False, Copied, "boolean";
    GenerationCanceledAt "generationCanceledAt": Null, Copied, "unknown";
    CancelReason "cancelReason": Null, Copied, "'accept' | 'discard' | null";
    AnnotationArtifacts "annotationArtifacts": EmptyArray, ArrayCopy, "Array<{ type: string; path: unknown }>";
    MountedVariants "mountedVariants": EmptyArray, ArrayCopy, "number[]";
    MountFailures "mountFailures": EmptyArray, ArrayCopy, "LiveMountFailure[]";
    RenderState "renderState": Null, NullishToNull, "'pending' | 'mounted' | 'failed' | null";
    Diagnostics "diagnostics": EmptyArray, ArrayCopy, "LiveSessionDiagnostic[]";
    UpdatedAt "updatedAt": Null, EntryTime, "unknown";
}

/// Fields that are not in the base snapshot but that events add (after
/// every other key, when first set), with their TypeScript types.
pub const ADDED_FIELDS: [(&str, &str); 2] = [("detectorWaivers", "unknown[]"), ("message", "unknown")];

/// The event types the reducer handles; any other type is journaled and
/// recorded as `unknown_event_type`.
pub const EVENT_TYPES: [&str; 19] = [
    "generate",
    "variant_plan",
    "detector_waivers",
    "agent_phase",
    "variants_ready",
    "agent_done",
    "variant_mounted",
    "variant_mount_failed",
    "checkpoint",
    "accept",
    "accept_intent",
    "manual_edit_apply",
    "steer",
    "carbonize_cleanup",
    "steer_done",
    "discard",
    "discarded",
    "complete",
    "agent_error",
];

/// Phases that end a session's active life: `getSnapshot` answers `null`
/// for them unless asked to include completed sessions.
pub const COMPLETED_PHASES: [&str; 2] = ["completed", "discarded"];

/// Phases after which a late write from a canceled generation is a ghost:
/// it is journaled as a diagnostic instead of applied.
pub const GENERATION_FENCED_PHASES: [&str; 5] =
    ["accept_requested", "discard_requested", "carbonize_required", "completed", "discarded"];

/// How many mount failures a snapshot keeps: enough for the agent to spot a
/// variant that fails on every republish, not the whole retry storm.
pub const MOUNT_FAILURE_HISTORY: usize = 5;

pub fn is_completed(phase: &Value) -> bool {
    COMPLETED_PHASES.iter().any(|p| phase.is_str(p))
}

pub fn is_fenced(phase: &Value) -> bool {
    GENERATION_FENCED_PHASES.iter().any(|p| phase.is_str(p))
}

impl Field {
    pub fn spec(self) -> &'static FieldSpec {
        &FIELDS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The field's value in `baseSnapshot(id)`.
    pub fn initial(self, id: &JsStr) -> Value {
        match self.spec().initial {
            Initial::Id => Value::String(id.clone()),
            Initial::Text(t) => Value::str(t),
            Initial::Null => Value::Null,
            Initial::Zero => Value::Number(0.0),
            Initial::False => Value::Bool(false),
            Initial::EmptyObject => Value::Object(Object::new()),
            Initial::EmptyArray => Value::Array(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_unique_and_found_by_name() {
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i);
            assert_eq!(Field::by_name(f.name()), Some(*f));
        }
        for (name, _) in ADDED_FIELDS {
            assert_eq!(Field::by_name(name), None, "{name} is added by events, not a base field");
        }
        assert_eq!(Field::by_name("token"), None);
    }
}
