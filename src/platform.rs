//! Platform specifics (pid liveness, process start time, advisory file locks).
