//! The `sitegen` binary as a user runs it, as one test binary: its commands
//! and flags, `sitegen init`, the README's quick start in a fresh clone,
//! and `sitegen serve` rebuilding on edits.

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod init;
mod quick_start;
mod serve;
