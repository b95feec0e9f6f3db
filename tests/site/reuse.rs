//! `sitegen build` takes from the previous build the files of every part
//! whose sources did not change (src/app/reuse.rs). After each change below,
//! a build over the last one is a build from scratch, byte for byte, and it
//! took the unchanged parts (linked: the same files) rather than render them.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use sitegen::app::pipeline::{BuildOptions, BuildSummary, load_over, write_site};

/// Every file of the site but the marker (the manifest is left out by
/// `files_under`).
fn pages(out: &Path) -> Vec<(String, Vec<u8>)> {
    common::files_under(out)
        .into_iter()
        .filter(|(p, _)| p != ".sitegen")
        .collect()
}

fn build(data: &Path, out: &Path, fresh: bool) -> BuildSummary {
    let opts = BuildOptions {
        fresh,
        ..Default::default()
    };
    write_site(&load_over(data, opts, Some(out)).unwrap(), out).unwrap()
}

/// Builds `data` over the site in `out`, holds it to a build from scratch
/// and returns what the build said.
fn build_over(data: &Path, out: &Path, step: &str) -> BuildSummary {
    let summary = build(data, out, false);
    let scratch = tempfile::tempdir().unwrap();
    let fresh_out = scratch.path().join("site");
    let fresh = build(data, &fresh_out, true);
    assert_eq!(fresh.reused, 0, "{step}: --fresh takes nothing");
    assert_eq!(fresh.runs_unchanged, 0, "{step}: --fresh reads every file");
    assert_eq!(summary.files, fresh.files, "{step}: the same files");
    let (got, want) = (pages(out), pages(&fresh_out));
    if got != want {
        let (a, b): (
            std::collections::BTreeMap<_, _>,
            std::collections::BTreeMap<_, _>,
        ) = (got.into_iter().collect(), want.into_iter().collect());
        let differ: Vec<&String> = a
            .keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .take(10)
            .collect();
        panic!(
            "{step}: the build over the last one differs from a build from scratch at {differ:?}"
        );
    }
    summary
}

fn inode(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().ino()
}

#[test]
fn a_build_over_the_last_one_is_a_build_from_scratch() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = tmp.path().join("site");
    // Two series of 12 runs (GLM even, Step odd), and a comparison.
    common::many_runs(&data, 24);
    // Each run's files its own (src/store/kept.rs stamps them).
    common::own_files(&data);
    let comparisons = |title: &str| {
        format!(
            r#"{{"comparisons": [{{"title": "{title}", "runs": ["run-00000", "run-00001"]}}]}}"#
        )
    };
    std::fs::write(data.join("comparisons.json"), comparisons("GLM vs Step")).unwrap();

    let first = build(&data, &out, false);
    assert_eq!(first.reused, 0, "nothing to take from");
    assert_eq!(first.runs_unchanged, 0, "no run read before");
    // A new folder: no copy of the runs kept. A build over a site keeps them.
    let kept = out.join(sitegen::app::reuse::KEPT_RUNS);
    assert!(!kept.exists());
    let second = build_over(&data, &out, "the second build");
    assert_eq!(second.runs_unchanged, 0);
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 24);
    let page = |id: &str| out.join(format!("runs/{id}/index.html"));
    let old_page = inode(&page("run-00002"));

    // Nothing changed: everything but the lists taken, the same files,
    // every run read from the last build's copy.
    let again = build_over(&data, &out, "nothing changed");
    assert_eq!(again.runs_unchanged, 24);
    assert!(
        again.reused * 10 > again.files * 9,
        "nothing changed, yet only {} of {} files were kept",
        again.reused,
        again.files
    );
    assert_eq!(
        inode(&page("run-00002")),
        old_page,
        "a kept page is the same file, linked"
    );

    // A new night of GLM: its page, its series and the newest run's line
    // again; the other runs kept.
    common::copy_run(&data, "run-00022", "run-00024", "2026-01-13T02:00:00Z");
    let new_run = build_over(&data, &out, "a new run");
    assert!(new_run.reused > 0 && new_run.reused < new_run.files);
    assert_eq!(
        new_run.runs_unchanged, 24,
        "the new run read from its files"
    );
    assert_eq!(inode(&page("run-00002")), old_page);

    // A run in the middle of a series and in the comparison made slower.
    common::scale_total(&data.join("run-00000/cells/decode-00008192-x001.json"), 0.5);
    let slower = build_over(&data, &out, "a slower cell");
    assert!(slower.reused > 0);
    assert_eq!(
        slower.runs_unchanged, 24,
        "the edited run read from its files"
    );

    // A cell written over in place, its size, inode and modification time
    // as they were: only its change time tells (src/store/kept.rs), and the
    // page shows the new figure (build_over holds it to a build from scratch).
    let cell = data.join("run-00006/cells/decode-00008192-x001.json");
    let text = std::fs::read_to_string(&cell).unwrap();
    let written = text.replacen(
        "\"total_tok_per_s\": 175.8",
        "\"total_tok_per_s\": 125.8",
        1,
    );
    assert!(written != text && written.len() == text.len());
    let before = std::fs::metadata(&cell).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let file = std::fs::OpenOptions::new().write(true).open(&cell).unwrap();
    std::io::Write::write_all(&mut &file, written.as_bytes()).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&cell).unwrap();
    assert_eq!(
        (after.ino(), after.len(), after.modified().unwrap()),
        (before.ino(), before.len(), before.modified().unwrap())
    );
    let in_place = build_over(&data, &out, "a cell written over in place");
    assert_eq!(in_place.runs_unchanged, 24, "run-00006 read from its files");
    assert!(
        std::fs::read_to_string(page("run-00006"))
            .unwrap()
            .contains("125.8")
    );

    // A cell that is a link to a file elsewhere, that file replaced: the
    // link's own stamp is the same, the file's is not.
    let cell = data.join("run-00008/cells/decode-00008192-x001.json");
    let elsewhere = tmp.path().join("elsewhere.json");
    std::fs::rename(&cell, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &cell).unwrap();
    build_over(&data, &out, "a cell made a link");
    build_over(&data, &out, "a cell made a link, its run's copy kept");
    common::scale_total(&elsewhere, 0.5);
    let linked = build_over(&data, &out, "the file a cell links to replaced");
    assert_eq!(linked.runs_unchanged, 24, "run-00008 read from its files");

    // A copy of a run that is not one: the run is read from its files.
    let copy = out.join(sitegen::app::reuse::KEPT_RUNS).join("run-00008");
    let bytes = std::fs::read(&copy).unwrap();
    std::fs::write(&copy, &bytes[..bytes.len() / 2]).unwrap();
    let broken_copy = build_over(&data, &out, "a broken copy of a run");
    assert_eq!(broken_copy.runs_unchanged, 24);

    // A run removed, and a run's folder emptied of cells (left out).
    std::fs::remove_dir_all(data.join("run-00010")).unwrap();
    std::fs::remove_dir_all(data.join("run-00013/cells")).unwrap();
    build_over(&data, &out, "a run removed and one emptied");

    // A run of a setup of its own, then a second run of it: the first run's
    // bytes are the same, but its page now has a series line.
    common::copy_run_as_model(
        &data,
        "run-00001",
        "z-other",
        "2026-02-01T02:00:00Z",
        "Other-Model",
    );
    build_over(&data, &out, "a run of a new setup");
    let lone = std::fs::read_to_string(page("z-other")).unwrap();
    common::copy_run(&data, "z-other", "z-other-2", "2026-02-02T02:00:00Z");
    build_over(&data, &out, "a second run of that setup");
    assert_ne!(
        std::fs::read_to_string(page("z-other")).unwrap(),
        lone,
        "the first run's page names its series now"
    );

    // A page edited by hand is rendered again, not kept.
    let edited = page("run-00004");
    let mut bytes = std::fs::read(&edited).unwrap();
    bytes.extend_from_slice(b"<!-- edited -->");
    std::fs::write(&edited, bytes).unwrap();
    build_over(&data, &out, "a page edited by hand");

    // The data folder's own files change every part: nothing kept.
    std::fs::write(data.join("comparisons.json"), comparisons("Step vs GLM")).unwrap();
    let renamed = build_over(&data, &out, "a comparison renamed");
    assert_eq!(renamed.reused, 0);

    // A manifest that is not one, or that points outside the site: no harm.
    let manifest = out.join(sitegen::app::reuse::MANIFEST);
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("runs/run-00002/index.html"));
    std::fs::write(
        &manifest,
        text.replace("runs/run-00002/index.html", "../escape.html"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("escape.html"), b"outside").unwrap();
    let outside = build_over(&data, &out, "a manifest pointing outside");
    assert!(outside.reused > 0, "the other parts are still kept");
    std::fs::write(&manifest, b"{ not json").unwrap();
    let broken = build_over(&data, &out, "a broken manifest");
    assert_eq!(broken.reused, 0);
}
