//! `sitegen run` against the emulated engine, as one test binary: figures
//! and statuses against what the engine logged (emulated), each session
//! depth against the engine's log (sessions), server counters and GPU
//! telemetry against its exporters (telemetry), the streams' transports
//! (transport), the client's reading of its own load (self_check).

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/emulator.rs"]
mod emulator;
#[path = "../support/run_cli.rs"]
mod run_cli;

mod emulated;
mod self_check;
mod sessions;
mod telemetry;
mod transport;

/// The tests of both modules measure timing on a 2-core machine: they run
/// one at a time, so that one test's load does not show in another's
/// figures. One lock for the whole binary: a lock per module would let a
/// test of each run at once.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
