//! docs/schema/*.json is generated from the Rust types, and every file in data/
//! is valid against it, checked by a real JSON Schema validator.

use crate::common;

use common::{data_dir, repo};

#[test]
fn committed_schemas_are_the_generated_ones() {
    for (name, generated) in sitegen::store::schema::data_schemas() {
        let path = repo().join("docs/schema").join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is out of date: run `cargo run -- schema` and commit the result",
            path.display()
        );
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("docs/schema").join(name)).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn every_bundled_data_file_validates_against_the_schema() {
    let (run_schema, cell_schema) = (validator("run.schema.json"), validator("cell.schema.json"));
    let comparisons_schema = validator("comparisons.schema.json");
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(data_dir()) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let schema = match path.file_name().unwrap().to_str().unwrap() {
            "run.json" => &run_schema,
            "comparisons.json" => &comparisons_schema,
            _ => &cell_schema,
        };
        let errors: Vec<String> = schema.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        checked += 1;
    }
    assert_eq!(checked, 1 + 2 + 73 + 55);
}

#[test]
fn the_schema_rejects_what_the_store_rejects() {
    let cell_schema = validator("cell.schema.json");
    for bad in [
        serde_json::json!({"phase": "decode", "context_tokens": 8192, "concurrency": "4", "status": "valid"}),
        serde_json::json!({"phase": "decode", "context_tokens": 8192, "concurrency": 4, "status": "fine"}),
        serde_json::json!({"phase": "warmup", "context_tokens": 8192}),
        serde_json::json!({"phase": "prefill", "context_tokens": 8192, "status": "valid", "extra": 1}),
    ] {
        assert!(!cell_schema.is_valid(&bad), "{bad}");
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("decode-00008192-x004.json");
        std::fs::write(&path, bad.to_string()).unwrap();
        let err = sitegen::store::read_cell(&path).expect_err(&bad.to_string());
        assert!(
            err.to_string().contains("decode-00008192-x004.json"),
            "the store's error names the file: {err}"
        );
    }
}

/// The changes.json shown in docs/data-format.md is valid against its schema.
#[test]
fn the_documented_changes_file_validates() {
    let docs = std::fs::read_to_string(repo().join("docs/data-format.md")).unwrap();
    let section = docs
        .split("## changes.json")
        .nth(1)
        .expect("a changes.json section");
    let example = section
        .split("```json\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("an example");
    let value: serde_json::Value = serde_json::from_str(example).unwrap();
    let schema = validator("changes.schema.json");
    let errors: Vec<String> = schema.iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        !schema.is_valid(&serde_json::json!({"changes": [{"date": "2026-10-16"}]})),
        "text is required"
    );
}
