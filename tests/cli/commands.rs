//! The `sitegen` binary as a user runs it.

use crate::common;

use common::{data_dir, files_under, fixture_pages, repo, sitegen, stderr};

#[test]
fn reimporting_the_reference_pages_reproduces_data_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut args = vec![
        "ingest".to_string(),
        "page".into(),
        "--data".into(),
        data.display().to_string(),
    ];
    args.extend(fixture_pages().iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sitegen(&args, tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    // Every run of data/ (comparisons.json is written by hand, not imported).
    let bundled: Vec<_> = files_under(&data_dir())
        .into_iter()
        .filter(|(rel, _)| rel != "comparisons.json")
        .collect();
    assert_eq!(files_under(&data), bundled);
}

#[test]
fn an_existing_run_is_not_overwritten_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let page = fixture_pages()[1].display().to_string();
    let ok = sitegen(&["ingest", "page", &page, "--data", "d"], tmp.path());
    assert!(ok.status.success(), "{}", stderr(&ok));
    let run_json = tmp
        .path()
        .join("d/step-3.5-flash-h200x4-vllm-0.29.0/run.json");
    std::fs::write(&run_json, "{\"edited\": true}").unwrap();
    let again = sitegen(&["ingest", "page", &page, "--data", "d"], tmp.path());
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already exists (pass --force"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        std::fs::read_to_string(&run_json).unwrap(),
        "{\"edited\": true}"
    );
    let forced = sitegen(
        &["ingest", "page", &page, "--data", "d", "--force"],
        tmp.path(),
    );
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(
        std::fs::read_to_string(&run_json)
            .unwrap()
            .contains("Step-3.5-Flash")
    );
}

#[test]
fn a_bad_page_is_an_error_naming_file_and_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(&fixture_pages()[0]).unwrap();
    let bad = good.replace(
        "| Sustained decode | 8K | 4 | Valid | 511.7 |",
        "| Sustained decode | 8K | 4 | Valid | 511,7 |",
    );
    let bad_path = tmp.path().join("bad.txt");
    std::fs::write(&bad_path, bad).unwrap();
    let good_path = fixture_pages()[1].display().to_string();
    let out = sitegen(
        &["ingest", "page", &good_path, "bad.txt", "--data", "d"],
        tmp.path(),
    );
    assert!(!out.status.success());
    let line = good
        .lines()
        .position(|l| l.contains("| 8K | 4 | Valid | 511.7"))
        .unwrap()
        + 1;
    let err = stderr(&out);
    assert!(err.contains(&format!("bad.txt:{line}: expected a throughput like 18.9K or 4,764.0 in column \"Total tok/s\", found \"511,7\"")), "{err}");
    assert!(
        !tmp.path().join("d").exists(),
        "the good page was written although the batch failed"
    );
}

#[test]
fn build_works_from_any_folder_and_a_failed_build_keeps_the_previous_site() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let out = tmp.path().join("public");
    let page = fixture_pages()[0].display().to_string();
    assert!(
        sitegen(&["ingest", "page", &page, "--data", "data"], tmp.path())
            .status
            .success()
    );
    let ok = sitegen(&["build", "--data", "data", "--out", "public"], tmp.path());
    assert!(ok.status.success(), "{}", stderr(&ok));
    let before = files_under(&out);
    assert!(
        before.iter().any(|(p, _)| p == "static/style.css"),
        "assets are embedded in the binary"
    );

    let cell = data.join("glm-5.3-flash-h200x4-vllm/cells/decode-00008192-x002.json");
    std::fs::write(&cell, r#"{"phase":"decode","context_tokens":8192,"concurrency":2,"status":"valid","total_tok_per_s":"fast"}"#).unwrap();
    let failed = sitegen(&["build", "--data", "data", "--out", "public"], tmp.path());
    assert!(!failed.status.success());
    let err = stderr(&failed);
    assert!(err.contains("decode-00008192-x002.json: field `total_tok_per_s`: invalid type: string \"fast\", expected f64"), "{err}");
    assert_eq!(files_under(&out), before);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Each file of the site in `out` by its inode (Unix).
fn inodes(out: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    use std::os::unix::fs::MetadataExt;
    files_under(out)
        .into_iter()
        .map(|(rel, _)| {
            let ino = std::fs::metadata(out.join(&rel)).unwrap().ino();
            (rel, ino)
        })
        .collect()
}

/// The numbers in "(unchanged since the last build: R runs read from its
/// copy, F files kept)", if said: (R, F), R 0 where not said.
fn kept_said(err: &str) -> Option<(usize, usize)> {
    let (_, said) = err.split_once(" (unchanged since the last build: ")?;
    let (runs, files) = said
        .split_once(" read from its copy, ")
        .unwrap_or(("0", said));
    let (files, _) = files.split_once(" kept)")?;
    let number = |words: &str| words.split(' ').next()?.replace(',', "").parse().ok();
    Some((number(runs)?, number(files)?))
}

#[test]
fn a_build_says_how_many_files_it_kept_and_kept_them() {
    let tmp = tempfile::tempdir().unwrap();
    // A copy: data/'s files change time as other tests link them.
    common::copy_bundled_data(&tmp.path().join("data"));
    let data = "data".to_string();
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--data", &data, "--out", "site"];
        args.extend_from_slice(extra);
        let out = sitegen(&args, tmp.path());
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let site = tmp.path().join("site");
    let first = build(&[]);
    assert_eq!(kept_said(&first), None, "nothing to keep: {first}");
    let before = inodes(&site);
    // The number said is the number of files that are the same files.
    let again = build(&[]);
    let after = inodes(&site);
    let same = after
        .iter()
        .filter(|(p, ino)| before.get(*p) == Some(ino))
        .count();
    assert!(same > 0);
    // Into a folder that held a site: a copy of each run kept for the next
    // build, which reads both runs from it.
    assert_eq!(kept_said(&again), Some((0, same)), "{again}");
    let third = build(&[]);
    assert_eq!(kept_said(&third).map(|(runs, _)| runs), Some(2), "{third}");
    let after = inodes(&site);
    // --fresh keeps none, and says none.
    let fresh = build(&["--fresh"]);
    assert_eq!(kept_said(&fresh), None, "{fresh}");
    let renewed = inodes(&site);
    assert!(renewed.iter().all(|(p, ino)| after.get(p) != Some(ino)));
}

#[test]
fn an_empty_or_missing_data_folder_publishes_nothing_unless_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let page = fixture_pages()[0].display().to_string();
    assert!(
        sitegen(&["ingest", &page, "--data", "data"], tmp.path())
            .status
            .success()
    );
    assert!(
        sitegen(&["build", "--out", "public"], tmp.path())
            .status
            .success()
    );
    let before = files_under(&tmp.path().join("public"));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let out = sitegen(&["build", "--data", "empty", "--out", "public"], tmp.path());
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        "error: empty: no run in this folder (a run is a folder holding run.json); to build an empty site on purpose pass --allow-empty\n"
    );
    assert_eq!(
        files_under(&tmp.path().join("public")),
        before,
        "the site is kept"
    );
    // A missing folder: its cause said once.
    let out = sitegen(
        &["build", "--data", "nonexistent", "--out", "public"],
        tmp.path(),
    );
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        "error: nonexistent: no such folder; pass --data with the folder that holds your runs, or run `sitegen init` to set up a results folder (its data/ has an example run)\n"
    );
    assert_eq!(files_under(&tmp.path().join("public")), before);
    // On purpose: an empty site.
    let out = sitegen(
        &[
            "build",
            "--data",
            "empty",
            "--out",
            "public",
            "--allow-empty",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !files_under(&tmp.path().join("public"))
            .iter()
            .any(|(p, _)| p.starts_with("runs/"))
    );
}

#[test]
fn every_broken_file_of_a_build_is_reported_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    let runs: Vec<std::path::PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(runs.len(), 2);
    let mut sorted = runs.clone();
    sorted.sort();
    std::fs::write(
        sorted[0].join("cells/decode-00008192-x002.json"),
        "{\"phase\": \"decode\"",
    )
    .unwrap();
    std::fs::write(sorted[0].join("cells/prefill-00008192.json"), "[]").unwrap();
    let run_json = sorted[1].join("run.json");
    let text = std::fs::read_to_string(&run_json)
        .unwrap()
        .replace("\"gpu_count\": 4", "\"gpu_count\": 0");
    std::fs::write(&run_json, text).unwrap();
    std::fs::write(
        data.join("comparisons.json"),
        r#"{"comparisons": [{"title": "t", "runs": ["a", "b"]}, {"title": "t", "runs": ["b", "a"]}]}"#,
    )
    .unwrap();
    let out = sitegen(&["build", "--out", "public"], tmp.path());
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.starts_with("error: 3 problems:\n"), "{err}");
    for expected in [
        "decode-00008192-x002.json:1:18: not valid JSON: EOF while parsing an object; the line reads: `{\"phase\": \"decode\"`",
        "prefill-00008192.json: field `(document)`: expected a JSON object",
        "run.json: field `hardware.gpu_count`: expected at least 1",
    ] {
        assert_eq!(
            err.matches(expected).count(),
            1,
            "{expected} once in: {err}"
        );
    }
    assert!(!tmp.path().join("public").exists(), "nothing is written");
}

#[test]
fn a_run_of_unknown_hardware_builds_with_a_warning_and_no_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    common::copy_bundled_data(&data);
    // A copy of a run whose GPU nobody gave, as sitegen run writes it.
    let original = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let copy = data.join("remote-run");
    std::fs::create_dir_all(copy.join("cells")).unwrap();
    for (rel, bytes) in files_under(&original) {
        std::fs::write(copy.join(rel), bytes).unwrap();
    }
    let run_json = copy.join("run.json");
    let text = std::fs::read_to_string(&run_json)
        .unwrap()
        .replace("\"gpu\": \"H200 SXM\"", "\"gpu\": \"unknown\"");
    std::fs::write(&run_json, text).unwrap();
    let out = sitegen(&["build", "--out", "public"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: run remote-run: not compared automatically: its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)"),
        "{}",
        stderr(&out)
    );
    let pages = files_under(&tmp.path().join("public"));
    assert!(
        !pages
            .iter()
            .any(|(p, _)| p.starts_with("compare/") && p.contains("remote-run"))
    );
}

#[test]
fn build_refuses_to_replace_a_folder_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("docs")).unwrap();
    std::fs::write(tmp.path().join("docs/keep.md"), "mine").unwrap();
    let data = data_dir().display().to_string();
    let out = sitegen(&["build", "--data", &data, "--out", "docs"], tmp.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not replacing a non-empty folder"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("docs/keep.md")).unwrap(),
        "mine"
    );
}

#[test]
fn a_run_page_survives_a_round_trip_through_its_csv_download() {
    // build -> measurements.csv -> ingest csv (cards from --meta) -> build.
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data_dir(), &site).unwrap();
    let again = tmp.path().join("again");
    std::fs::create_dir_all(&again).unwrap();
    std::fs::copy(
        data_dir().join("comparisons.json"),
        again.join("comparisons.json"),
    )
    .unwrap();
    let runs = [
        "glm-5.3-flash-h200x4-vllm",
        "step-3.5-flash-h200x4-vllm-0.29.0",
    ];
    for id in runs {
        let csv = site.join(format!("runs/{id}/measurements.csv"));
        let meta = data_dir().join(id).join("run.json");
        let out = sitegen(
            &[
                "ingest",
                "csv",
                &csv.display().to_string(),
                "--id",
                id,
                "--meta",
                &meta.display().to_string(),
                "--data",
                &again.display().to_string(),
            ],
            tmp.path(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("(csv)"), "{}", stderr(&out));
    }
    let rebuilt = tmp.path().join("rebuilt");
    sitegen::app::pipeline::build_site(&again, &rebuilt).unwrap();
    for id in runs {
        let page = format!("runs/{id}/index.html");
        assert!(
            std::fs::read(site.join(&page)).unwrap() == std::fs::read(rebuilt.join(&page)).unwrap(),
            "{page} changed in the round trip"
        );
    }
    // Not only the pages: every file of the site comes back the same.
    assert_eq!(files_under(&rebuilt), files_under(&site));
}

#[test]
fn ingest_recognises_the_format_or_says_which_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let page = fixture_pages()[1].display().to_string();
    // No format named: recognised from the content.
    let out = sitegen(&["ingest", &page, "--data", "d"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("(page)"), "{}", stderr(&out));
    // A word that is neither a file nor a format.
    let out = sitegen(&["ingest", "vllm-bnech", &page, "--data", "d"], tmp.path());
    assert!(!out.status.success());
    let said = format!(
        "vllm-bnech: no such file, and not a format ({}, auto)",
        sitegen::ingest::Format::names().join(", ")
    );
    assert!(stderr(&out).contains(&said), "{said} in {}", stderr(&out));
    // A CSV without cards: the missing fields are listed, nothing is written.
    let csv = tmp.path().join("m.csv");
    std::fs::write(
        &csv,
        format!(
            "{}\ndecode,8192,1,valid,,10,,10,5,100,,1,3,300,30,,,,,,,,,{}\n",
            sitegen::ingest::csv::header(),
            // The latency percentiles' columns, empty.
            ",".repeat(15)
        ),
    )
    .unwrap();
    let out = sitegen(&["ingest", "csv", "m.csv", "--data", "e"], tmp.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("m.csv: the file does not say model, hardware.gpu"),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.path().join("e").exists(), "nothing is written");
}

#[test]
fn ingest_dry_run_says_what_it_read_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = repo()
        .join("tests/fixtures/real/llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json")
        .display()
        .to_string();
    let meta = tmp.path().join("m.json");
    std::fs::write(&meta, r#"{"hardware": {"gpu_count": 4}}"#).unwrap();
    let out = sitegen(
        &[
            "ingest",
            "--dry-run",
            &file,
            "--meta",
            "m.json",
            "--data",
            "d",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    for line in [
        "llm-decode-bench (llm_decode_bench.py 0.4.17)",
        "cards from the file: engine.name = vllm, engine.version = 0.20.2rc1.dev249+glmkimirebase20260514, hardware.gpu = RTX PRO 6000 Blackwell Server Edition,",
        "cards given (flags, --meta): hardware.gpu_count = 4",
        "would write d/rtx6kpro-glm51-dcp1-mtp0-decode-matrix with 35 cells:",
        "decode  0 (no prompt) × 1   : Valid, 59.0 tok/s",
        "× 64  : Over capacity (64 × (0 + 2048) = 131072 tokens exceed the budget of 85376)",
    ] {
        assert!(said.contains(line), "{line:?} in:\n{said}");
    }
    assert!(!tmp.path().join("d").exists(), "a dry run writes nothing");
}

#[test]
fn help_names_every_format_and_every_schema_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sitegen(&["ingest", "--help"], tmp.path());
    let help = String::from_utf8(out.stdout).unwrap();
    for format in sitegen::ingest::Format::names() {
        assert!(help.contains(format), "{format} in {help}");
    }
    let out = sitegen(&["schema", "--help"], tmp.path());
    let help = String::from_utf8(out.stdout).unwrap();
    for (file, _) in sitegen::store::schema::data_schemas() {
        let stem = file.trim_end_matches(".schema.json");
        assert!(help.contains(stem), "{stem} in {help}");
    }
}

#[test]
fn version_names_the_version_and_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sitegen(&["--version"], tmp.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let rest = text
        .strip_prefix(&format!("sitegen {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        rest == "unknown" || (rest.len() == 12 && rest.chars().all(|c| c.is_ascii_hexdigit())),
        "{text:?}"
    );
}

#[test]
fn a_format_word_is_the_format_even_beside_a_folder_of_that_name() {
    // The corpus layout itself: a folder per format in the working directory.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("llm-decode-bench")).unwrap();
    let file = repo()
        .join("tests/fixtures/real/llm-decode-bench/rtx6kpro-glm51-dcp1-mtp0-decode-matrix.json")
        .display()
        .to_string();
    let out = sitegen(
        &[
            "ingest",
            "llm-decode-bench",
            &file,
            "--gpu-count",
            "4",
            "--data",
            "d",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(llm-decode-bench), read as llm_decode_bench.py 0.4.17"),
        "{}",
        stderr(&out)
    );
    // --format names it too; both at once is refused.
    let out = sitegen(
        &["ingest", "--format", "guidellm", &file, "--data", "e"],
        tmp.path(),
    );
    assert!(!out.status.success());
    let out = sitegen(
        &[
            "ingest",
            "--format",
            "csv",
            "llm-decode-bench",
            &file,
            "--data",
            "e",
        ],
        tmp.path(),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out)
            .contains("--format csv and the format word llm-decode-bench both name a format"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cards_come_from_flags_without_a_json_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = repo()
        .join("tests/fixtures/real/guidellm/danielkorat-qwen3-4b-tp4-benchmarks.json")
        .display()
        .to_string();
    // Without them: the flags that give them are named.
    let out = sitegen(&["ingest", "guidellm", &file, "--data", "d"], tmp.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "the file does not say hardware.gpu, hardware.gpu_count, engine.name: give them with --gpu H100 --gpu-count 4 --engine vllm, or pass them in a JSON file with --meta"
        ),
        "{}",
        stderr(&out)
    );
    let out = sitegen(
        &[
            "ingest",
            "guidellm",
            &file,
            "--gpu",
            "H100",
            "--gpu-count",
            "4",
            "--engine",
            "vllm",
            "--engine-version",
            "0.11.0",
            "--data",
            "d",
            "--id",
            "g",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let run = sitegen::store::load_run(&tmp.path().join("d/g")).unwrap();
    assert_eq!(run.meta.hardware.gpu, "H100");
    assert_eq!(run.meta.hardware.gpu_count, 4);
    assert_eq!(run.meta.engine.name, "vllm");
    assert_eq!(run.meta.engine.version.as_deref(), Some("0.11.0"));
    // --meta is merged over the flags, as `sitegen run` merges it.
    std::fs::write(
        tmp.path().join("m.json"),
        r#"{"hardware": {"gpu_count": 8}}"#,
    )
    .unwrap();
    let out = sitegen(
        &[
            "ingest",
            "guidellm",
            &file,
            "--gpu",
            "H100",
            "--gpu-count",
            "4",
            "--engine",
            "vllm",
            "--meta",
            "m.json",
            "--data",
            "d",
            "--id",
            "h",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let run = sitegen::store::load_run(&tmp.path().join("d/h")).unwrap();
    assert_eq!(run.meta.hardware.gpu_count, 8);
}

#[test]
fn a_setting_measured_twice_is_one_cell_with_its_repeats_on_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let file = repo()
        .join("tests/fixtures/real/vllm-bench/er0080-sweep-max_num_seqs=4-summary.json")
        .display()
        .to_string();
    let out = sitegen(
        &[
            "ingest",
            &file,
            "--gpu",
            "H100",
            "--gpu-count",
            "1",
            "--engine",
            "vllm",
            "--id",
            "sweep",
            "--data",
            "d",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let run = sitegen::store::load_run(&tmp.path().join("d/sweep")).unwrap();
    let cells: Vec<_> = run.decode_cells().collect();
    assert_eq!(cells.len(), 1, "one setting, one cell");
    let c = cells[0];
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let totals: Vec<f64> = raw
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total_output_tokens"].as_f64().unwrap() / r["duration"].as_f64().unwrap())
        .collect();
    assert_eq!(c.repeats.len(), 2);
    for (w, t) in c.repeats.iter().zip(&totals) {
        assert_eq!(w.total_tok_per_s, Some(*t));
    }
    assert_eq!(c.total_tok_per_s, sitegen::stats::median(totals.clone()));
    let ci = c.total_tok_per_s_ci95.as_ref().unwrap();
    assert_eq!(ci.method, "2 repeats in the file");
    // The same half-width `run --repeat` gives: t(1) × sd / √2.
    let mean = (totals[0] + totals[1]) / 2.0;
    let sd = ((totals[0] - mean).powi(2) + (totals[1] - mean).powi(2)).sqrt();
    let half = sitegen::stats::t_975(1.0) * sd / 2f64.sqrt();
    assert!((ci.high - (mean + half)).abs() < 1e-6, "{ci:?}");
    // The page shows the cell with its interval, as for `run --repeat`.
    let out = sitegen(&["build", "--data", "d", "--out", "site"], tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(tmp.path().join("site/runs/sweep/index.html")).unwrap();
    let shown = format!(
        "{} tok/s total {}",
        sitegen::model::format::tok_per_s(c.total_tok_per_s.unwrap()),
        sitegen::model::format::plus_minus(c.total_noise().unwrap())
    );
    assert!(page.contains(&shown), "{shown} on the page");
}

#[test]
fn export_writes_llm_d_reports_that_ingest_reads_back_and_says_what_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data_dir().display().to_string();
    let run = "step-3.5-flash-h200x4-vllm-0.29.0";
    let out = sitegen(
        &[
            "export",
            "--format",
            "llm-d-report",
            "--data",
            &data,
            "--out",
            "reports",
            run,
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("llm-d Benchmark Reports into reports/{run}")),
        "{said}"
    );
    assert!(said.contains("left out: 7 prefill cells"), "{said}");
    assert!(said.contains("decode 64K × 4 (Looped)"), "{said}");
    let dir = tmp.path().join("reports").join(run);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("decode-00008192-x004.yaml")),
        "{files:?}"
    );
    let mut args = vec!["ingest", "llm-d-report", "--data", "back", "--id", "back"];
    args.extend(files.iter().map(String::as_str));
    let out = sitegen(&args, tmp.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("read as Benchmark Report v0.2.1"),
        "{}",
        stderr(&out)
    );
    // A run that is not there: named, with the runs that are.
    let out = sitegen(
        &[
            "export",
            "--format",
            "llm-d-report",
            "--data",
            &data,
            "nope",
        ],
        tmp.path(),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("nope: no such run in"),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.path().join("export").exists(), "nothing is written");
}
