//! What the importer tests share: the card fields a file may not state,
//! the `--meta` a user gives for them, the import options, and the check
//! every real file of a corpus passes.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sitegen::ingest::{Format, ImportOptions, Outcome, import};
use sitegen::model::Run;

pub const GPU: &str = "hardware.gpu";
pub const COUNT: &str = "hardware.gpu_count";
pub const ENGINE: &str = "engine.name";
pub const MODEL: &str = "model";

/// Cards a result file does not carry, as a user passes them with --meta.
pub const META: &str =
    r#"{"hardware": {"gpu": "H100 SXM", "gpu_count": 1}, "engine": {"name": "vllm"}}"#;

/// A --meta giving exactly `missing`, as a user would.
pub fn meta_for(missing: &[&str]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let mut meta = serde_json::json!({});
    for path in missing {
        let value = match *path {
            MODEL => Value::from("Given-Model"),
            GPU => Value::from("Given GPU"),
            COUNT => Value::from(3),
            ENGINE => Value::from("given-engine"),
            other => panic!("unexpected missing card {other}"),
        };
        match path.split_once('.') {
            Some((head, tail)) => meta[head][tail] = value,
            None => meta[*path] = value,
        }
    }
    Some(meta.to_string())
}

/// Options of an import into `tmp/data`, `meta` written to `tmp/meta.json`.
pub fn options(
    tmp: &Path,
    id: Option<&str>,
    meta: Option<&str>,
    context_tokens: Option<u64>,
    dry_run: bool,
) -> ImportOptions {
    let meta_path = meta.map(|m| {
        let p = tmp.join("meta.json");
        std::fs::write(&p, m).unwrap();
        p
    });
    ImportOptions {
        id: id.map(str::to_string),
        data: tmp.join("data"),
        force: false,
        meta: meta_path,
        cards: Value::Null,
        context_tokens,
        gpu_index: None,
        dry_run,
    }
}

/// What importing one real file gives.
pub enum Expect {
    /// It imports; these required cards are missing from it (given by --meta).
    Imports(&'static [&'static str]),
    /// It is refused with an error holding this text.
    Refused(&'static str),
}

/// One real file of a corpus, read.
pub struct RealFile<'a> {
    /// Its path under tests/fixtures/real/.
    pub rel: &'a str,
    pub format: &'a str,
    pub path: PathBuf,
    pub text: String,
}

/// Every file of `corpus` (its path under tests/fixtures/real/, its format
/// and what it gives) is recognised as its format. One refused is refused,
/// with every card given, by an error holding the reason and naming the
/// file, writing nothing; `refused` checks the error further. One that
/// imports lacks exactly the cards listed, as a dry run (which writes
/// nothing) says, and imports with those given; `imported` checks the run
/// against the file.
pub fn every_file_imports_or_is_refused(
    corpus: &[(&str, &str, Expect)],
    refused: impl Fn(&RealFile, &str),
    imported: impl Fn(&RealFile, &Run, &Outcome),
) {
    for (rel, format, expect) in corpus {
        let path = super::real(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let file = RealFile {
            rel,
            format,
            path,
            text,
        };
        assert_eq!(
            Format::detect(&file.text).map(Format::name),
            Some(*format),
            "{rel} is recognised"
        );
        let files = std::slice::from_ref(&file.path);
        match expect {
            Expect::Refused(why) => {
                let tmp = tempfile::tempdir().unwrap();
                let opts = options(tmp.path(), Some("x"), Some(META), None, false);
                let err = format!("{:#}", import(None, files, &opts).unwrap_err());
                assert!(err.contains(why), "{rel}: {err}");
                assert!(
                    err.contains(&*file.path.display().to_string()),
                    "{rel}: names the file: {err}"
                );
                assert!(!tmp.path().join("data").exists(), "{rel}: nothing written");
                refused(&file, &err);
            }
            Expect::Imports(missing) => {
                // A dry run says what is missing and writes nothing.
                let tmp = tempfile::tempdir().unwrap();
                let opts = options(tmp.path(), Some("x"), None, None, true);
                let dry = import(None, files, &opts).unwrap_or_else(|e| panic!("{rel}: {e:#}"));
                assert!(
                    !tmp.path().join("data").exists(),
                    "{rel}: a dry run writes nothing"
                );
                assert_eq!(
                    dry[0].missing, *missing,
                    "{rel}: cards the file does not state"
                );
                // With exactly those given, it imports.
                let tmp = tempfile::tempdir().unwrap();
                let meta = meta_for(missing);
                let opts = options(tmp.path(), Some("x"), meta.as_deref(), None, false);
                let mut written =
                    import(None, files, &opts).unwrap_or_else(|e| panic!("{rel}: {e:#}"));
                assert_eq!(written.len(), 1, "{rel}: one run");
                let outcome = written.remove(0);
                let run = sitegen::store::load_run(&outcome.dir).unwrap();
                imported(&file, &run, &outcome);
            }
        }
    }
}
