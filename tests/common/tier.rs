//! Test tiers that need outside tools (Chromium, a JRE, a llama.cpp venv).
//!
//! Such a tier is its own test target with `harness = false`, so a missing
//! tool shows in the test summary as "ignored, <why>" instead of a pass.
//! With `CI` set a missing tool fails every test of the tier: `.ci/run`
//! installs the tools, and a tier that did not run must not land as green.

use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// One test of a tier: its name and its body, given the tools.
pub type TierTest<T> = (&'static str, fn(&T));

/// Runs `tests` with the tools `find` looks up once, or reports each of them
/// as ignored (locally) or failed (in CI) with the reason the tools are missing.
pub fn run<T: Send + Sync + 'static>(
    tier: &str,
    find: impl FnOnce() -> Result<T, String>,
    tests: Vec<TierTest<T>>,
) -> ExitCode {
    let args = Arguments::from_args();
    // Listing the tests (`--list`, used by nextest) must not look for tools.
    let tools = if args.list {
        Err(String::new())
    } else {
        find()
            .map(Arc::new)
            .inspect_err(|why| eprintln!("{tier} tier: {why}"))
    };
    let in_ci = std::env::var_os("CI").is_some();
    let trials = tests
        .into_iter()
        .map(|(name, body)| {
            let tools = tools.clone();
            let tier = tier.to_string();
            Trial::ignorable_test(name, move || match tools {
                Ok(t) => {
                    body(&t);
                    Ok(Completion::Completed)
                }
                Err(why) if in_ci => Err(Failed::from(format!(
                    "the {tier} tier cannot run in CI: {why}"
                ))),
                Err(why) => Ok(Completion::ignored_with(format!(
                    "{why}; .ci/run installs what the {tier} tier needs"
                ))),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
