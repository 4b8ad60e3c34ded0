//! Session journals, their snapshots, and the store that keeps both.

pub mod answers;
pub mod host;
pub mod journal;
mod lazy_field;
pub mod record;
pub mod reducer;
pub mod schema;
pub mod snapshot;
pub mod snapshot_file;
pub mod store;
