//! How sitegen reaches other people's CI: the workflows and the action pass
//! actionlint (with shellcheck on their scripts), the release configuration
//! plans an archive for every platform the action installs on, and the
//! action's install script installs a release and refuses a corrupted one.
//!
//! The tools come from `.ci/run`: actionlint and dist from PyPI wheels in
//! target/release-venv, shellcheck from Debian.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo;
use common::tier::{self, TierTest};

struct Tools {
    actionlint: PathBuf,
    dist: PathBuf,
}

/// A tool in .ci/run's venv, else on PATH.
fn find_tool(name: &str) -> Result<PathBuf, String> {
    let venv = repo().join("target/release-venv/bin").join(name);
    if venv.is_file() {
        return Ok(venv);
    }
    let on_path = Command::new(name).arg("--version").output();
    match on_path {
        Ok(o) if o.status.success() => Ok(PathBuf::from(name)),
        _ => Err(format!("{name} is not installed")),
    }
}

fn find() -> Result<Tools, String> {
    for needed in ["shellcheck", "curl", "xz"] {
        find_tool(needed)?;
    }
    Ok(Tools {
        actionlint: find_tool("actionlint")?,
        dist: find_tool("dist")?,
    })
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// actionlint over `files`, run from the repository so that
/// .github/actionlint.yaml applies; shellcheck checks every `run:` script.
fn actionlint(tools: &Tools, files: &[PathBuf]) {
    let out = run(Command::new(&tools.actionlint)
        .args(["-oneline", "-shellcheck", "shellcheck"])
        .args(files)
        .current_dir(repo()));
    assert!(out.status.success(), "actionlint:\n{}", text(&out));
}

fn every_workflow_passes_actionlint(tools: &Tools) {
    let mut workflows: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    workflows.sort();
    let names: Vec<_> = workflows.iter().map(|p| p.file_name().unwrap()).collect();
    assert_eq!(names, ["pages.yml", "release.yml"]);
    actionlint(tools, &workflows);
}

/// actionlint checks an action's inputs where a workflow uses it, not the
/// action's own steps: they are checked here as the steps of a reusable
/// workflow with the action's inputs (so `inputs.*`, `github.action_ref` and
/// `steps.*` resolve as they do in the action).
fn the_actions_steps_pass_actionlint(tools: &Tools) {
    let action: yaml_serde::Value =
        yaml_serde::from_str(&std::fs::read_to_string(repo().join("action.yml")).unwrap()).unwrap();
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let mut inputs = yaml_serde::Mapping::new();
    for (name, spec) in action["inputs"].as_mapping().unwrap() {
        let mut input = yaml_serde::Mapping::new();
        input.insert("type".into(), "string".into());
        input.insert("required".into(), false.into());
        input.insert("default".into(), spec["default"].clone());
        inputs.insert(name.clone(), input.into());
    }
    let workflow = yaml_serde::to_string(&yaml_serde::from_str::<yaml_serde::Value>(&format!(
        "on: {{workflow_call: {{inputs: {}}}}}\njobs: {{action: {{runs-on: ubuntu-latest, steps: {}}}}}",
        serde_json::to_string(&inputs).unwrap(),
        serde_json::to_string(&action["runs"]["steps"]).unwrap(),
    ))
    .unwrap())
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("action-steps.yml");
    std::fs::write(&path, workflow).unwrap();
    actionlint(tools, &[path]);
}

/// The workflow `sitegen init` writes, with an example run and without.
fn the_workflow_init_writes_passes_actionlint(tools: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (dir, flags) in [("example", &[][..]), ("empty", &["--allow-empty"][..])] {
        let out = run(Command::new(env!("CARGO_BIN_EXE_sitegen"))
            .arg("init")
            .args(flags)
            .arg(dir)
            .current_dir(tmp.path()));
        assert!(out.status.success(), "{}", text(&out));
        files.push(tmp.path().join(dir).join(".github/workflows/pages.yml"));
    }
    actionlint(tools, &files);
}

fn every_script_passes_shellcheck(_: &Tools) {
    let out = run(Command::new("shellcheck")
        .args([
            "scripts/install-release.sh",
            "scripts/test-under-load.sh",
            ".ci/run",
        ])
        .current_dir(repo()));
    assert!(out.status.success(), "shellcheck:\n{}", text(&out));
}

fn the_release_workflow_is_what_dist_generates(tools: &Tools) {
    let out = run(Command::new(&tools.dist)
        .args(["generate", "--check"])
        .current_dir(repo()));
    assert!(
        out.status.success(),
        "release.yml differs from what `dist generate` makes of Cargo.toml [workspace.metadata.dist]:\n{}",
        text(&out)
    );
}

/// Every archive the action may download, as `install-release.sh --archives` lists them.
fn archives_the_action_installs() -> Vec<String> {
    let out = run(Command::new("bash")
        .args(["scripts/install-release.sh", "--archives"])
        .current_dir(repo()));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn dist_plan_lists_every_release_artifact(tools: &Tools) {
    let out = run(Command::new(&tools.dist)
        .args(["plan", "--output-format=json", "--no-local-paths"])
        .current_dir(repo()));
    assert!(out.status.success(), "dist plan:\n{}", text(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut artifacts: Vec<&str> = plan["artifacts"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    artifacts.sort();
    // The CI log lists what a release holds.
    println!(
        "dist plan: {} artifacts\n  {}",
        artifacts.len(),
        artifacts.join("\n  ")
    );

    for target in [
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-musl",
        "x86_64-unknown-linux-musl",
    ] {
        let archive = format!("sitegen-{target}.tar.xz");
        for name in [archive.clone(), format!("{archive}.sha256")] {
            assert!(
                artifacts.contains(&name.as_str()),
                "no {name} in {artifacts:?}"
            );
        }
    }
    for name in [
        "sitegen-x86_64-pc-windows-msvc.zip",
        "sitegen-x86_64-pc-windows-msvc.zip.sha256",
        "sitegen-installer.sh",
        "sitegen-installer.ps1",
        "sha256.sum",
    ] {
        assert!(artifacts.contains(&name), "no {name} in {artifacts:?}");
    }
    // The action downloads only what a release holds, checksum included.
    for archive in archives_the_action_installs() {
        assert!(
            artifacts.contains(&archive.as_str()),
            "the action installs {archive}, which no release holds"
        );
        let sum = format!("{archive}.sha256");
        assert!(artifacts.contains(&sum.as_str()), "no {sum}");
    }
    // The archives hold the binary where install-release.sh and cargo
    // binstall's metadata look for it.
    let windows = &plan["artifacts"]["sitegen-x86_64-pc-windows-msvc.zip"]["assets"];
    assert!(
        windows
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["path"] == "sitegen.exe"),
        "{windows}"
    );
}

/// A release as dist lays it out, served from this machine: the script
/// installs it by tag and as "latest", and refuses a corrupted archive.
fn the_install_script_installs_a_release_and_refuses_a_corrupted_one(_: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, bytes) = packed_release(tmp.path());
    let good = sha256_line(&bytes, &archive);
    let server = ReleaseServer::start(vec![
        (
            format!("/releases/download/v9.9.9/{archive}"),
            bytes.clone(),
        ),
        (
            format!("/releases/download/v9.9.9/{archive}.sha256"),
            good.clone().into_bytes(),
        ),
        (
            format!("/releases/latest/download/{archive}"),
            bytes.clone(),
        ),
        (
            format!("/releases/latest/download/{archive}.sha256"),
            good.into_bytes(),
        ),
        (format!("/releases/download/v6.6.6/{archive}"), bytes),
        (
            format!("/releases/download/v6.6.6/{archive}.sha256"),
            sha256_line(b"something else", &archive).into_bytes(),
        ),
    ]);
    let releases = format!("{}/releases", server.url);

    for version in ["v9.9.9", "latest"] {
        let dest = tmp.path().join(format!("bin-{version}"));
        let out = install(&releases, version, &dest);
        assert!(out.status.success(), "install {version}:\n{}", text(&out));
        let installed = dest.join("sitegen");
        let said = String::from_utf8(out.stdout).unwrap();
        assert_eq!(said.lines().last(), Some(installed.to_str().unwrap()));
        let version = run(Command::new(&installed).arg("--version"));
        assert!(text(&version).starts_with("sitegen "), "{}", text(&version));
    }

    let dest = tmp.path().join("bin-bad");
    let out = install(&releases, "v6.6.6", &dest);
    assert!(!out.status.success());
    assert!(text(&out).contains("sha256 is"), "{}", text(&out));
    assert!(
        !dest.join("sitegen").exists(),
        "a corrupted archive was installed"
    );

    let out = install(&releases, "v1.2.3", &tmp.path().join("bin-missing"));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("is v1.2.3 a sitegen release?"),
        "{}",
        text(&out)
    );

    let out = install(&releases, "main", &tmp.path().join("bin-branch"));
    assert!(!out.status.success());
    assert!(
        text(&out).contains("expected a release tag"),
        "{}",
        text(&out)
    );
}

/// This machine's release archive as dist packs it (sitegen-<target>/sitegen
/// inside a .tar.xz), holding the sitegen under test: (name, bytes).
fn packed_release(tmp: &Path) -> (String, Vec<u8>) {
    let archive = this_machines_archive();
    let folder = archive.trim_end_matches(".tar.xz");
    let stage = tmp.join("stage").join(folder);
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_sitegen"), stage.join("sitegen")).unwrap();
    let packed = tmp.join(&archive);
    // The test binary is large: the fastest xz level keeps packing it short.
    let out = run(Command::new("tar")
        .env("XZ_OPT", "-0 -T0")
        .arg("-cJf")
        .arg(&packed)
        .arg("-C")
        .arg(tmp.join("stage"))
        .arg(folder));
    assert!(out.status.success(), "{}", text(&out));
    (archive.clone(), std::fs::read(&packed).unwrap())
}

/// The `run:` script of the action's step `id`.
fn action_step(id: &str) -> String {
    let action: yaml_serde::Value =
        yaml_serde::from_str(&std::fs::read_to_string(repo().join("action.yml")).unwrap()).unwrap();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let step = steps.iter().find(|s| s["id"].as_str() == Some(id)).unwrap();
    step["run"].as_str().unwrap().to_string()
}

/// Runs a step's script as GitHub's runner does (`bash -e -o pipefail`).
fn run_step(script: &str, env: &[(&str, &Path)], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.args([
        "--noprofile",
        "--norc",
        "-e",
        "-o",
        "pipefail",
        "-c",
        script,
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// action.yml's own steps, as a workflow runs `uses: acme/sitegen@v9.9.9`
/// with the runner leaving github.action_ref and action_repository empty (as
/// it does in composite actions): the action finds its tag and repository in
/// its folder, installs that release and builds the site; at a branch it
/// installs the latest release and says so (there with Windows' backslashed
/// paths).
fn the_actions_steps_install_their_own_release_and_build(_: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, bytes) = packed_release(tmp.path());
    let sum = sha256_line(&bytes, &archive).into_bytes();
    let server = ReleaseServer::start(vec![
        (
            format!("/acme/sitegen/releases/download/v9.9.9/{archive}"),
            bytes.clone(),
        ),
        (
            format!("/acme/sitegen/releases/download/v9.9.9/{archive}.sha256"),
            sum.clone(),
        ),
        (
            format!("/acme/sitegen/releases/latest/download/{archive}"),
            bytes,
        ),
        (
            format!("/acme/sitegen/releases/latest/download/{archive}.sha256"),
            sum,
        ),
    ]);
    for (tag, expect_notice) in [("v9.9.9", false), ("main", true)] {
        let case = tmp.path().join(tag);
        // The runner checks an action out into _actions/OWNER/NAME/REF.
        let action_path = case.join("_actions/acme/sitegen").join(tag);
        std::fs::create_dir_all(action_path.join("scripts")).unwrap();
        std::fs::copy(
            repo().join("scripts/install-release.sh"),
            action_path.join("scripts/install-release.sh"),
        )
        .unwrap();
        let runner_temp = case.join("runner-temp");
        std::fs::create_dir_all(&runner_temp).unwrap();
        let outputs = case.join("install-outputs");
        // At the branch, the runner's paths come with backslashes, as on
        // Windows: the step turns them into paths Git Bash runs.
        let native = |p: &Path| {
            let p = p.to_str().unwrap();
            PathBuf::from(if expect_notice {
                p.replace('/', "\\")
            } else {
                p.to_string()
            })
        };
        let out = run_step(
            &action_step("install"),
            &[
                ("GITHUB_ACTION_PATH", &native(&action_path)),
                ("RUNNER_TEMP", &native(&runner_temp)),
                ("GITHUB_OUTPUT", &outputs),
            ],
            &[
                ("VERSION", ""),
                ("ACTION_REPOSITORY", ""),
                ("ACTION_REF", ""),
                ("SERVER_URL", &server.url),
                ("REPOSITORY", "someone/results"),
            ],
        );
        assert!(out.status.success(), "install at {tag}:\n{}", text(&out));
        assert_eq!(
            text(&out).contains("installing the latest release of acme/sitegen"),
            expect_notice,
            "{}",
            text(&out)
        );
        let said = std::fs::read_to_string(&outputs).unwrap();
        let binary = said.strip_prefix("binary=").unwrap().trim();
        assert!(Path::new(binary).starts_with(&runner_temp), "{binary}");

        let site = case.join("site");
        let outputs = case.join("build-outputs");
        let out = run_step(
            &action_step("build"),
            &[
                ("SITEGEN", Path::new(binary)),
                ("DATA", &repo().join("data")),
                ("OUT", &site),
                ("GITHUB_OUTPUT", &outputs),
            ],
            &[("ALLOW_EMPTY", "false")],
        );
        assert!(out.status.success(), "build at {tag}:\n{}", text(&out));
        assert!(site.join("index.html").is_file());
        let said = std::fs::read_to_string(&outputs).unwrap();
        assert!(said.contains("version=sitegen "), "{said}");
        assert!(said.contains(&format!("out={}", site.display())), "{said}");
    }
}

fn this_machines_archive() -> String {
    let out = run(Command::new("bash")
        .args(["scripts/install-release.sh", "--archive"])
        .current_dir(repo()));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn install(releases: &str, version: &str, dest: &Path) -> Output {
    run(Command::new("bash")
        .arg(repo().join("scripts/install-release.sh"))
        .args([releases, version])
        .arg(dest))
}

/// A `.sha256` file as dist writes it: "<hex> *<name>".
fn sha256_line(bytes: &[u8], name: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex} *{name}\n")
}

/// Serves fixed files on 127.0.0.1 until dropped.
struct ReleaseServer {
    url: String,
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ReleaseServer {
    fn start(files: Vec<(String, Vec<u8>)>) -> Self {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let serving = server.clone();
        let thread = std::thread::spawn(move || {
            for request in serving.incoming_requests() {
                let body = files
                    .iter()
                    .find(|(path, _)| path == request.url())
                    .map(|(_, bytes)| bytes.clone());
                let _ = match body {
                    Some(bytes) => request.respond(tiny_http::Response::from_data(bytes)),
                    None => request.respond(tiny_http::Response::empty(404)),
                };
            }
        });
        ReleaseServer {
            url,
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn main() -> std::process::ExitCode {
    let tests: Vec<TierTest<Tools>> = vec![
        (
            "every_workflow_passes_actionlint",
            every_workflow_passes_actionlint,
        ),
        (
            "the_actions_steps_pass_actionlint",
            the_actions_steps_pass_actionlint,
        ),
        (
            "the_workflow_init_writes_passes_actionlint",
            the_workflow_init_writes_passes_actionlint,
        ),
        (
            "every_script_passes_shellcheck",
            every_script_passes_shellcheck,
        ),
        (
            "the_release_workflow_is_what_dist_generates",
            the_release_workflow_is_what_dist_generates,
        ),
        (
            "dist_plan_lists_every_release_artifact",
            dist_plan_lists_every_release_artifact,
        ),
        (
            "the_install_script_installs_a_release_and_refuses_a_corrupted_one",
            the_install_script_installs_a_release_and_refuses_a_corrupted_one,
        ),
        (
            "the_actions_steps_install_their_own_release_and_build",
            the_actions_steps_install_their_own_release_and_build,
        ),
    ];
    tier::run("release", find, tests)
}
