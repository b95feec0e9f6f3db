//! What the importer tests share: the card fields a file may not state,
//! the `--meta` a user gives for them, and the import options.

use std::path::Path;

use serde_json::Value;
use sitegen::ingest::ImportOptions;

pub const GPU: &str = "hardware.gpu";
pub const COUNT: &str = "hardware.gpu_count";
pub const ENGINE: &str = "engine.name";
pub const MODEL: &str = "model";

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
