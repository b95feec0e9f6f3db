//! The README's quick start, run as written in a fresh clone of the
//! repository: the engine in the background, `sitegen run`, then
//! `sitegen serve`, whose site must show the run just measured. The two
//! `cargo` lines are the only stand-ins: a `cargo` on PATH that puts the
//! sitegen and emulated engine binaries this test run built where those
//! commands would (compiling them again would add minutes and test cargo,
//! not the README).

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The shell block under "## Quick start" of the README.
fn quick_start_block(readme: &str) -> String {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quick start"))
        .expect("the README has a Quick start section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the Quick start section has a ```sh block");
    block.to_string()
}

fn engine_binary() -> PathBuf {
    // cargo test builds the examples beside the binaries it tests.
    let sitegen = PathBuf::from(env!("CARGO_BIN_EXE_sitegen"));
    let engine = sitegen
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("emulated_engine{}", std::env::consts::EXE_SUFFIX));
    assert!(
        engine.exists(),
        "{} is missing: cargo test builds the examples; build it with cargo build --example emulated_engine",
        engine.display()
    );
    engine
}

fn write_shim(bin: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let shim = bin.join("cargo");
    std::fs::write(
        &shim,
        r#"#!/bin/sh
# The README's two cargo lines, with the binaries this test run built.
case "$*" in
  "install --locked --path .") ln -sf "$QUICK_START_SITEGEN" "$QUICK_START_BIN/sitegen" ;;
  "build --release --example emulated_engine")
    mkdir -p target/release/examples
    ln -sf "$QUICK_START_ENGINE" target/release/examples/emulated_engine ;;
  *) echo "quick start test: the README runs a cargo command it does not know: cargo $*" >&2; exit 1 ;;
esac
"#,
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
#[cfg(unix)]
fn the_readme_quick_start_runs_as_written_in_a_fresh_clone() {
    let repo = common::repo();
    let block = quick_start_block(&std::fs::read_to_string(repo.join("README.md")).unwrap());
    assert!(
        block.starts_with("cargo install --locked --path ."),
        "the quick start installs sitegen first:\n{block}"
    );
    // The engine's port, as the README writes it, must be free.
    assert!(
        std::net::TcpListener::bind("127.0.0.1:8001").is_ok(),
        "port 8001 (the README's engine) is taken on this machine"
    );
    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("sitegen");
    let cloned = Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks"])
        .arg(&repo)
        .arg(&clone)
        .status()
        .expect("git runs");
    assert!(cloned.success(), "git clone of {} failed", repo.display());
    // The README of the tree under test, in the fresh clone.
    std::fs::copy(repo.join("README.md"), clone.join("README.md")).unwrap();
    let bin = tmp.path().join("bin");
    write_shim(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -e\n{block}\n");
    let mut shell = Command::new("bash");
    shell
        .args(["-c", &script])
        .current_dir(&clone)
        .env("PATH", path)
        .env("QUICK_START_BIN", &bin)
        .env("QUICK_START_SITEGEN", env!("CARGO_BIN_EXE_sitegen"))
        .env("QUICK_START_ENGINE", engine_binary())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so the engine and the server stop with it.
        shell.process_group(0);
    }
    let started = Instant::now();
    let mut child = shell.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stop = Group(child.id() as i32, child);
    let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let log = said.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            log.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    // The last line, sitegen serve, prints its address first on stdout.
    let address: String;
    let mut stdout = BufReader::new(stdout);
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            panic!(
                "the quick start ended before sitegen serve printed its address ({:?}):\n{}",
                stop.1.wait(),
                said.lock().unwrap()
            );
        }
        if let Some(url) = line.trim().strip_prefix("serving ") {
            address = url.to_string();
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no address after 5 minutes"
        );
    }
    let measured = started.elapsed();
    let index = common::http_get(&address).unwrap().text().unwrap();
    assert!(index.contains("runs/emulated/index.html"), "{index}");
    let page = common::http_get(&format!("{address}runs/emulated/index.html"))
        .unwrap()
        .text()
        .unwrap();
    assert!(page.contains("Sustained decode"), "{page}");
    let log = said.lock().unwrap().clone();
    // 2 prefill cells and 4 decode windows, as the README's flags ask.
    assert!(log.contains("done: 6 cells measured"), "{log}");
    // Printed, not asserted (a busy machine is slower): the README says about 25 s.
    eprintln!(
        "quick start: engine, run and the server's first line after {:.1} s",
        measured.as_secs_f64()
    );
}

/// Stops a process group when dropped, and reaps its leader.
struct Group(i32, std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.0)])
            .status();
        let _ = self.1.wait();
    }
}
