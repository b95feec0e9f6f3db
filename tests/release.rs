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
    for needed in ["shellcheck", "curl", "xz", "jq"] {
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

/// Every script under scripts/, relative to the repository.
fn scripts() -> Vec<String> {
    let mut all: Vec<String> = std::fs::read_dir(repo().join("scripts"))
        .unwrap()
        .map(|e| format!("scripts/{}", e.unwrap().file_name().to_str().unwrap()))
        .collect();
    all.sort();
    assert!(
        all.contains(&"scripts/pr-comment.sh".to_string()),
        "{all:?}"
    );
    all
}

fn every_script_passes_shellcheck(_: &Tools) {
    let out = run(Command::new("shellcheck")
        .args(scripts())
        .arg(".ci/run")
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

/// The outputs a step wrote to $GITHUB_OUTPUT, by name.
fn step_outputs(path: &Path) -> std::collections::BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The action's check, comment and gate steps as a pull request that adds
/// a slower run meets them: the build step writes the site and records the
/// regression (its own exit 0), the job summary gets the report, the
/// comment step puts it on the pull request through a local stand-in for
/// GitHub's API (past 150 earlier comments, so it reads two pages), a second
/// push edits that same comment instead of adding one, a refused token
/// only warns, and the gate step fails the job. Without `check` the step
/// builds as before and records no verdict.
fn the_actions_check_and_comment_steps_keep_one_comment(_: &Tools) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for night in 0..7 {
        common::glm_run(
            &data,
            &format!("glm-{night}"),
            &format!("2026-10-0{}T02:00:00Z", night + 1),
            "0.11.0",
            if night == 6 { 0.8 } else { 1.0 },
        );
    }
    let runner_temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let build = |case: &str, check: &str| {
        let outputs = tmp.path().join(format!("{case}-outputs"));
        let summary = tmp.path().join(format!("{case}-summary.md"));
        let out = run_step(
            &action_step("build"),
            &[
                ("SITEGEN", Path::new(env!("CARGO_BIN_EXE_sitegen"))),
                ("DATA", &data),
                ("OUT", &tmp.path().join(format!("{case}-site"))),
                ("GITHUB_OUTPUT", &outputs),
                ("GITHUB_STEP_SUMMARY", &summary),
                ("RUNNER_TEMP", &runner_temp),
            ],
            &[
                ("ALLOW_EMPTY", "false"),
                ("CHECK", check),
                ("FAIL_ON", "regression"),
                ("SITE_URL", "https://someone.github.io/results/"),
            ],
        );
        assert!(out.status.success(), "build ({case}):\n{}", text(&out));
        assert!(tmp.path().join(format!("{case}-site/index.html")).is_file());
        (
            step_outputs(&outputs),
            std::fs::read_to_string(&summary).unwrap_or_default(),
        )
    };

    let (said, _) = build("unchecked", "false");
    assert!(
        !said.contains_key("verdict") && !said.contains_key("gate"),
        "{said:?}"
    );

    let (said, summary) = build("regression", "true");
    assert_eq!(
        said.get("verdict").map(String::as_str),
        Some("regression"),
        "{said:?}"
    );
    assert_eq!(said.get("gate").map(String::as_str), Some("1"), "{said:?}");
    assert!(
        summary.starts_with("## sitegen check: 1 regression\n"),
        "{summary}"
    );
    let report = PathBuf::from(&said["report"]);
    assert_eq!(std::fs::read_to_string(&report).unwrap(), summary);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&said["report-json"]).unwrap()).unwrap();
    assert_eq!(json["verdict"], "regression");

    let api = GitHubStandIn::start(150);
    let comment = |report: &Path| {
        run_step(
            &action_step("comment"),
            &[("GITHUB_ACTION_PATH", &repo()), ("REPORT", report)],
            &[
                ("GITHUB_TOKEN", "ghs_standin"),
                ("API_URL", &api.url),
                ("REPOSITORY", "someone/results"),
                ("PR", "7"),
            ],
        )
    };
    let out = comment(&report);
    assert!(out.status.success(), "comment:\n{}", text(&out));
    assert!(
        text(&out).contains("commented on pull request #7"),
        "{}",
        text(&out)
    );
    let ours = api.ours();
    assert_eq!(ours.len(), 1, "one comment from sitegen");
    assert!(
        ours[0].1.contains("## sitegen check: 1 regression"),
        "{}",
        ours[0].1
    );

    // The next push: the slower run replaced by one as fast as the rest.
    common::glm_run(&data, "glm-6", "2026-10-07T02:00:00Z", "0.11.0", 1.0);
    let (said, _) = build("fixed", "true");
    assert_eq!(
        said.get("verdict").map(String::as_str),
        Some("within_noise"),
        "{said:?}"
    );
    assert_eq!(said.get("gate").map(String::as_str), Some("0"), "{said:?}");
    let out = comment(Path::new(&said["report"]));
    assert!(out.status.success(), "comment:\n{}", text(&out));
    assert!(
        text(&out).contains("updated the sitegen comment"),
        "{}",
        text(&out)
    );
    let after = api.ours();
    assert_eq!(after.len(), 1, "still one comment");
    assert_eq!(after[0].0, ours[0].0, "the same comment, edited");
    assert!(
        after[0].1.contains("## sitegen check: 1 within noise"),
        "{}",
        after[0].1
    );
    let calls = api.calls();
    let writes: Vec<&str> = calls
        .iter()
        .filter(|(m, _, _)| m != "GET")
        .map(|(m, _, _)| m.as_str())
        .collect();
    assert_eq!(writes, ["POST", "PATCH"], "{calls:?}");
    assert!(
        calls
            .iter()
            .all(|(_, _, auth)| auth == "Bearer ghs_standin"),
        "{calls:?}"
    );
    assert!(
        calls.iter().any(|(_, url, _)| url.ends_with("page=2")),
        "past 100 comments the search reads the next page: {calls:?}"
    );

    // A token that may not comment (a fork's pull request): a warning, not a failure.
    api.refuse();
    let out = comment(&report);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("::warning::sitegen could not comment"),
        "{}",
        text(&out)
    );
    assert_eq!(api.ours().len(), 1);

    let out = run_step(
        &action_step("gate"),
        &[],
        &[("VERDICT", "regression"), ("FAIL_ON", "regression")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("::error::sitegen check: regression"),
        "{}",
        text(&out)
    );
}

/// The part of GitHub's REST API the comment step uses: a pull request's
/// comments listed page by page, one created, one edited. Comments from
/// others are there first.
struct GitHubStandIn {
    url: String,
    state: std::sync::Arc<std::sync::Mutex<StandInState>>,
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct StandInState {
    comments: Vec<(u64, String)>,
    calls: Vec<(String, String, String)>,
    refuse: bool,
}

const MARKER: &str = "<!-- sitegen-check -->";

impl GitHubStandIn {
    fn start(others: usize) -> Self {
        let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let state = std::sync::Arc::new(std::sync::Mutex::new(StandInState {
            comments: (0..others as u64)
                .map(|i| (1000 + i, format!("looks good {i}")))
                .collect(),
            ..Default::default()
        }));
        let (serving, shared) = (server.clone(), state.clone());
        let thread = std::thread::spawn(move || {
            for mut request in serving.incoming_requests() {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let method = request.method().to_string();
                let url = request.url().to_string();
                let auth = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"))
                    .map(|h| h.value.to_string())
                    .unwrap_or_default();
                let mut s = shared.lock().unwrap();
                s.calls.push((method.clone(), url.clone(), auth));
                let (code, reply) = if s.refuse && method != "GET" {
                    (
                        403,
                        serde_json::json!({"message": "Resource not accessible by integration"}),
                    )
                } else if method == "GET"
                    && let Some(query) =
                        url.strip_prefix("/repos/someone/results/issues/7/comments?")
                {
                    let param = |k: &str| {
                        query
                            .split('&')
                            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                            .and_then(|v| v.parse::<usize>().ok())
                    };
                    let (per, page) = (param("per_page").unwrap_or(30), param("page").unwrap_or(1));
                    let list: Vec<_> = s
                        .comments
                        .iter()
                        .skip((page - 1) * per)
                        .take(per)
                        .map(|(id, body)| serde_json::json!({"id": id, "body": body}))
                        .collect();
                    (200, serde_json::Value::Array(list))
                } else if method == "POST" && url == "/repos/someone/results/issues/7/comments" {
                    let text: serde_json::Value = serde_json::from_str(&body).unwrap();
                    let id = 5000 + s.comments.len() as u64;
                    s.comments
                        .push((id, text["body"].as_str().unwrap().to_string()));
                    (201, serde_json::json!({"id": id}))
                } else if method == "PATCH"
                    && let Some(id) = url.strip_prefix("/repos/someone/results/issues/comments/")
                    && let Some(c) = s.comments.iter_mut().find(|c| c.0.to_string() == id)
                {
                    let text: serde_json::Value = serde_json::from_str(&body).unwrap();
                    c.1 = text["body"].as_str().unwrap().to_string();
                    (200, serde_json::json!({"id": c.0}))
                } else {
                    (404, serde_json::json!({"message": "Not Found"}))
                };
                drop(s);
                let _ = request.respond(
                    tiny_http::Response::from_string(reply.to_string()).with_status_code(code),
                );
            }
        });
        GitHubStandIn {
            url,
            state,
            server,
            thread: Some(thread),
        }
    }

    /// sitegen's comments: (id, body).
    fn ours(&self) -> Vec<(u64, String)> {
        let s = self.state.lock().unwrap();
        s.comments
            .iter()
            .filter(|(_, body)| body.starts_with(MARKER))
            .cloned()
            .collect()
    }

    fn calls(&self) -> Vec<(String, String, String)> {
        self.state.lock().unwrap().calls.clone()
    }

    fn refuse(&self) {
        self.state.lock().unwrap().refuse = true;
    }
}

impl Drop for GitHubStandIn {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
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
        (
            "the_actions_check_and_comment_steps_keep_one_comment",
            the_actions_check_and_comment_steps_keep_one_comment,
        ),
    ];
    tier::run("release", find, tests)
}
