//! `sitegen init`: a new results repository that builds at once, and a folder
//! with files in it that init never changes behind the user's back.

use crate::common;

use std::path::Path;

use common::site_check::link_problems;
use common::{files_under, sitegen, stderr};

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path.as_ref())
        .unwrap_or_else(|e| panic!("{}: {e}", path.as_ref().display()))
}

#[test]
fn init_sets_up_a_repository_whose_site_builds_and_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("results");
    let out = sitegen(&["init", "results"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("wrote results/.github/workflows/pages.yml"),
        "{said}"
    );
    assert!(
        said.contains("example-step-3.5-flash-h200x4-vllm/ (56 files)"),
        "{said}"
    );

    // The workflow builds through the action at this binary's version.
    let workflow = read(repo.join(".github/workflows/pages.yml"));
    let action = sitegen::app::init::action_name();
    let uses = format!("uses: {action}@v{}", env!("CARGO_PKG_VERSION"));
    assert!(workflow.contains(&uses), "{workflow}");
    assert!(!workflow.contains("allow-empty"), "{workflow}");
    assert!(read(repo.join(".gitignore")).lines().any(|l| l == "/site/"));
    let readme = read(repo.join("README.md"));
    for words in [
        "sitegen run --url",
        "sitegen ingest",
        "sitegen serve",
        "docs/publishing.md",
    ] {
        assert!(
            readme.contains(words),
            "README.md lacks {words:?}:\n{readme}"
        );
    }

    // `sitegen build` there, with its defaults, as the action runs it.
    let out = sitegen(&["build"], &repo);
    assert!(out.status.success(), "{}", stderr(&out));
    let site = repo.join("site");
    let problems = link_problems(&site);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Open it as a reader: the index links the example run, whose page holds
    // the reference figures.
    let index = read(site.join("index.html"));
    assert!(
        index.contains("runs/example-step-3.5-flash-h200x4-vllm/"),
        "{index}"
    );
    let run = read(site.join("runs/example-step-3.5-flash-h200x4-vllm/index.html"));
    assert!(
        run.contains("Step-3.5-Flash"),
        "the run page names no model"
    );
    assert!(
        run.contains("Sustained decode"),
        "the run page has no decode table"
    );
}

/// docs/publishing.md shows the workflow `init` writes: the same YAML, comments aside.
#[test]
fn the_publishing_docs_show_the_workflow_init_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sitegen(&["init", "r"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let written: yaml_serde::Value =
        yaml_serde::from_str(&read(tmp.path().join("r/.github/workflows/pages.yml"))).unwrap();
    let docs = read(common::repo().join("docs/publishing.md"));
    let section = docs
        .split("## GitHub Pages, with the action")
        .nth(1)
        .expect("docs/publishing.md has no section on the action");
    let snippet = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the section has no yaml snippet");
    let shown: yaml_serde::Value = yaml_serde::from_str(snippet).unwrap();
    assert_eq!(
        shown, written,
        "docs/publishing.md shows another workflow than init writes"
    );
}

#[test]
fn init_into_a_folder_with_files_fails_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let before = files_under(dir);

    let out = sitegen(&["init", "."], dir);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(
        said.contains("the folder is not empty (it holds data, notes.txt)"),
        "{said}"
    );
    assert!(said.contains("--force"), "{said}");
    assert_eq!(
        files_under(dir),
        before,
        "a refused init changed the folder"
    );
    let entries = std::fs::read_dir(dir).unwrap().count();
    assert_eq!(entries, 2, "a refused init left something behind");
}

#[test]
fn init_with_force_adds_what_is_missing_and_overwrites_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A repository that already has a README, a .gitignore without site/ and a run.
    std::fs::write(dir.join("README.md"), "# my results\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    common::copy_bundled_data(&dir.join("data"));
    let before = files_under(dir);

    let out = sitegen(&["init", "--force", "."], dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("kept (already there) ./README.md"), "{said}");
    assert!(said.contains("add /site/ to it"), "{said}");
    assert!(
        said.contains("data/ already holds runs: no example run added"),
        "{said}"
    );

    // Every file that was there is byte for byte as it was; the workflow is new.
    let after: std::collections::HashMap<_, _> = files_under(dir).into_iter().collect();
    for (path, bytes) in &before {
        assert_eq!(after.get(path), Some(bytes), "{path} changed");
    }
    let added: Vec<&String> = after
        .keys()
        .filter(|p| !before.iter().any(|(b, _)| b == *p))
        .collect();
    assert_eq!(added, [".github/workflows/pages.yml"], "added {added:?}");

    // A second init --force finds everything there and writes nothing.
    let again = files_under(dir);
    let out = sitegen(&["init", "--force", "."], dir);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("wrote"), "{}", stderr(&out));
    assert_eq!(files_under(dir), again);
}

#[test]
fn init_allow_empty_leaves_data_empty_and_the_workflow_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sitegen(&["init", "--allow-empty", "empty"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let repo = tmp.path().join("empty");
    let data: Vec<_> = files_under(&repo.join("data"))
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(data, [".gitkeep"]);
    let workflow = read(repo.join(".github/workflows/pages.yml"));
    assert!(workflow.contains("allow-empty: true"), "{workflow}");
    assert!(
        stderr(&out).contains("sitegen serve --allow-empty"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("sitegen build --allow-empty"),
        "{}",
        stderr(&out)
    );
    // Without the flag an empty data folder is refused, with it the site builds.
    assert!(!sitegen(&["build"], &repo).status.success());
    let out = sitegen(&["build", "--allow-empty"], &repo);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn init_refuses_a_path_that_is_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("taken"), "x").unwrap();
    let out = sitegen(&["init", "taken"], tmp.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("taken: exists and is not a folder"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(tmp.path().join("taken")), "x");
}
