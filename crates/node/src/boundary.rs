//! The numbers and names both sides of the JS-Rust boundary use, defined
//! here only: `lib/api.cjs` reads them from [`boundary`] when it loads, as it
//! reads the schema, and checks its `HOST_OPS` against them. The
//! declarations napi-rs generates for the binding (`target/binding.d.ts`)
//! are what `__test__/boundary.test.mjs` type-checks the wrapper (`index.js`, `lib/`) against.

use napi_derive::napi;
use quiver_live_core::session::host::HostOp;

/// What the text of a snapshot payload holds (see `store_snapshot`).
#[derive(Clone, Copy)]
pub enum PayloadKind {
    /// The whole snapshot.
    Whole = 0,
    /// Only the base fields changed since the version the wrapper holds.
    ChangedFields = 1,
}

/// What a patch of a payload puts at its path (see `convert::Payload`).
#[derive(Clone, Copy)]
pub enum Patch {
    Undefined = 0,
    NaN = 1,
    Infinity = 2,
    NegativeInfinity = 3,
    NegativeZero = 4,
    /// A kept host value, by its place in the payload's list.
    Host = 5,
    /// The prototype of the object at the path: a payload of its own.
    Proto = 6,
}

/// The wrapper's `HOST_OPS` function that makes the test of one walk over
/// a caller's value (see `convert::from_js`).
pub const START_WALK: &str = "startWalk";

/// What the test of a walk answers about an object met for the first
/// time; one met before is answered with its number (0 and up).
#[derive(Clone, Copy)]
pub enum WalkAnswer {
    /// Read it as data.
    Read = -1,
    /// Hold it by reference.
    Hold = -2,
}

/// The wrapper's `HOST_OPS` function that builds a value from its payload.
pub const MATERIALIZE: &str = "materialize";

#[napi(object)]
pub struct PayloadKinds {
    pub whole: u32,
    pub changed_fields: u32,
}

#[napi(object)]
pub struct WalkAnswers {
    pub read: i32,
    pub hold: i32,
}

#[napi(object)]
pub struct PatchCodes {
    pub undefined: u32,
    pub nan: u32,
    pub infinity: u32,
    pub negative_infinity: u32,
    pub negative_zero: u32,
    pub host: u32,
    pub proto: u32,
}

/// The boundary's constants, for the wrapper.
#[napi(object)]
pub struct Boundary {
    pub payload: PayloadKinds,
    pub patch: PatchCodes,
    pub walk: WalkAnswers,
    /// Every function the wrapper's `HOST_OPS` must have.
    pub host_ops: Vec<String>,
}

#[napi(catch_unwind)]
pub fn boundary() -> Boundary {
    Boundary {
        payload: PayloadKinds { whole: PayloadKind::Whole as u32, changed_fields: PayloadKind::ChangedFields as u32 },
        patch: PatchCodes {
            undefined: Patch::Undefined as u32,
            nan: Patch::NaN as u32,
            infinity: Patch::Infinity as u32,
            negative_infinity: Patch::NegativeInfinity as u32,
            negative_zero: Patch::NegativeZero as u32,
            host: Patch::Host as u32,
            proto: Patch::Proto as u32,
        },
        walk: WalkAnswers { read: WalkAnswer::Read as i32, hold: WalkAnswer::Hold as i32 },
        host_ops: [START_WALK, MATERIALIZE].into_iter().chain(HostOp::ALL.map(HostOp::name)).map(str::to_owned).collect(),
    }
}
