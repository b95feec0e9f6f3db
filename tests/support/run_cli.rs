//! `sitegen run` as a user runs it, for the tests against the emulated
//! engine: the binary, its outcome, and the run it wrote.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use sitegen::model::{DecodeCell, Run};

pub struct Outcome {
    pub success: bool,
    pub stderr: String,
}

/// Runs the sitegen binary (the real CLI) against `url` into `data/r`,
/// with `envs` set for it.
pub async fn sitegen_run(url: &str, data: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Outcome {
    sitegen_run_under(&[], url, data, extra, envs).await
}

/// [`sitegen_run`] started by the command `under` (`["nice", "-n", "15"]`),
/// which is given the binary and its arguments.
pub async fn sitegen_run_under(
    under: &[&str],
    url: &str,
    data: &Path,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Outcome {
    let binary = env!("CARGO_BIN_EXE_sitegen");
    let mut cmd = match under {
        [] => std::process::Command::new(binary),
        [program, args @ ..] => {
            let mut c = std::process::Command::new(program);
            c.args(args).arg(binary);
            c
        }
    };
    cmd.args(["run", "--url", url, "--run-id", "r", "--data"])
        .arg(data)
        .args(extra);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    Outcome {
        success: out.status.success(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The run `sitegen_run` wrote.
pub fn load(data: &Path) -> Run {
    sitegen::store::load_run(&data.join("r")).unwrap()
}

/// The run's decode cell at `n` requests at once.
pub fn decode(run: &Run, n: u32) -> &DecodeCell {
    run.decode_cells()
        .find(|c| c.concurrency == n)
        .unwrap_or_else(|| panic!("no decode cell x{n}"))
}

/// A fresh data folder (not created) in a temporary folder.
pub fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    (tmp, data)
}
