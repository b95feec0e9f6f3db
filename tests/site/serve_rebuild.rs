//! `sitegen serve` rebuilds what a change touches (src/app/rebuild.rs): after
//! each change below, the site it holds is the full build's, byte for byte,
//! and a change to one run renders a small part of the site again.

use crate::common;

use std::path::Path;

use sitegen::app::pipeline::{BuildOptions, BuildSummary, load, write_site};
use sitegen::app::rebuild::Rebuilder;

/// The files of a full build of `data`, as (path, bytes), sorted, and
/// what the build said.
fn full_build(data: &Path) -> (Vec<(String, Vec<u8>)>, BuildSummary) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let summary = write_site(&load(data, BuildOptions::default()).unwrap(), &out).unwrap();
    let files = common::files_under(&out)
        .into_iter()
        .filter(|(p, _)| p != ".sitegen")
        .collect();
    (files, summary)
}

/// Holds the rebuilder's site to the full build's, naming the files that differ.
fn assert_same_as_full_build(rebuilder: &Rebuilder, data: &Path, step: &str) {
    let (full, _) = full_build(data);
    let held: Vec<(String, Vec<u8>)> = rebuilder
        .site()
        .files
        .iter()
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect();
    if held != full {
        let paths = |v: &[(String, Vec<u8>)]| -> std::collections::BTreeMap<String, Vec<u8>> {
            v.iter().cloned().collect()
        };
        let (a, b) = (paths(&held), paths(&full));
        let differ: Vec<&String> = a
            .keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .take(10)
            .collect();
        panic!("{step}: the rebuilt site differs from a full build at {differ:?}");
    }
}

#[test]
fn a_rebuild_after_each_change_is_the_full_build() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Two series of 12 runs (GLM even, Step odd), and two comparisons.
    common::many_runs(&data, 24);
    let comparisons = |extra: &str| {
        format!(
            r#"{{"comparisons": [
                {{"title": "GLM vs Step, night 1", "runs": ["run-00000", "run-00001"]}},
                {{"title": "GLM vs Step, night 3", "runs": ["run-00004", "run-00005"]}}{extra}
            ]}}"#
        )
    };
    std::fs::write(data.join("comparisons.json"), comparisons("")).unwrap();
    let (mut rebuilder, summary) = Rebuilder::new(&data, BuildOptions::default()).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "the first build");
    let all = summary.files;

    // A new night of GLM: its page, its series' pages, the previous newest
    // run's line and the lists, not the other runs.
    let new = common::copy_run(&data, "run-00022", "run-00024", "2026-01-13T02:00:00Z");
    let update = rebuilder.update(&[new.join("run.json")]).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "a new run");
    assert!(!update.full);
    assert!(
        update.rendered * 3 < all,
        "a new run rendered {} of {all} files again",
        update.rendered
    );

    // A run in the middle of a series and in a comparison made slower: the
    // judgements after it, the comparison's page, the series.
    let cell = data.join("run-00004/cells/decode-00008192-x001.json");
    common::scale_total(&cell, 0.5);
    let update = rebuilder.update(std::slice::from_ref(&cell)).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "a slower cell");
    assert!(update.rendered < all);

    // The newest run of the other series made slower, its runs the same:
    // that series is judged again (its newest verdict changes), not kept.
    let cell = data.join("run-00023/cells/decode-00008192-x001.json");
    common::scale_total(&cell, 0.5);
    rebuilder.update(std::slice::from_ref(&cell)).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "the newest run of a series slower");

    // A run removed, and a run's folder emptied of cells (left out, said).
    std::fs::remove_dir_all(data.join("run-00010")).unwrap();
    let cells = data.join("run-00013/cells");
    std::fs::remove_dir_all(&cells).unwrap();
    rebuilder
        .update(&[data.join("run-00010"), cells.clone()])
        .unwrap();
    assert_same_as_full_build(&rebuilder, &data, "a run removed and one emptied");
    assert_eq!(
        rebuilder.update(&[]).unwrap().summary,
        full_build(&data).1,
        "the summary, warnings included, is the full build's"
    );

    // A run of a setup of its own, then a folder being written (hidden):
    // nothing to read.
    let other = common::copy_run_as_model(
        &data,
        "run-00001",
        "z-other",
        "2026-02-01T02:00:00Z",
        "Other-Model",
    );
    rebuilder.update(std::slice::from_ref(&other)).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "a run of a new setup");
    std::fs::create_dir_all(data.join(".sitegen-write-1")).unwrap();
    let update = rebuilder.update(&[data.join(".sitegen-write-1")]).unwrap();
    assert_eq!(update.rendered, 0);

    // The comparisons file changed: the whole site again.
    std::fs::write(
        data.join("comparisons.json"),
        comparisons(r#", {"title": "Other vs GLM", "runs": ["z-other", "run-00024"]}"#),
    )
    .unwrap();
    let update = rebuilder.update(&[data.join("comparisons.json")]).unwrap();
    assert!(update.full);
    assert_same_as_full_build(&rebuilder, &data, "a new comparison");

    // A run a comparison names, moved away: refused (comparisons.json names
    // it) and the site kept; moved back, the next change rebuilds from all
    // the runs, none lost to the refusal.
    let before = rebuilder.site().clone();
    let away = tmp.path().join("run-00001");
    std::fs::rename(data.join("run-00001"), &away).unwrap();
    let err = rebuilder.update(&[data.join("run-00001")]).unwrap_err();
    assert!(format!("{err:#}").contains("run-00001"), "{err:#}");
    assert_eq!(rebuilder.site(), &before);
    std::fs::rename(&away, data.join("run-00001")).unwrap();
    rebuilder.update(&[data.join("run-00001")]).unwrap();
    let cell = data.join("run-00003/cells/decode-00008192-x002.json");
    common::scale_total(&cell, 1.5);
    rebuilder.update(std::slice::from_ref(&cell)).unwrap();
    assert_same_as_full_build(&rebuilder, &data, "after a refused change");

    // A broken run is an error naming its file; the site stays as it was.
    let before = rebuilder.site().clone();
    common::save(&data.join("run-00002/run.json"), b"{ not json");
    let err = rebuilder
        .update(&[data.join("run-00002/run.json")])
        .unwrap_err();
    assert!(format!("{err:#}").contains("run-00002"), "{err:#}");
    assert_eq!(rebuilder.site(), &before);
}
