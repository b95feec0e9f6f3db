//! llm-d Benchmark Reports in tests: the stored v0.2.1 JSON Schema
//! (tests/fixtures/real/llm-d-report/schema/, byte for byte as llm-d
//! publishes it), a check of a report against it, and a run's reports
//! written where a test can read and import them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The v0.2.1 schema's validator.
pub fn validator() -> jsonschema::Validator {
    schema_validator("0_2_1")
}

/// The validator of llm-d's stored schema of report version `version`
/// ("0_2" or "0_2_1").
pub fn schema_validator(version: &str) -> jsonschema::Validator {
    let path = super::real(&format!(
        "llm-d-report/schema/llmdbench-br_v{version}_json_schema.json"
    ));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// A report file (YAML or JSON) as a JSON value.
pub fn read(path: &Path) -> Value {
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails with every schema error of `report`, each with its place.
pub fn assert_valid(validator: &jsonschema::Validator, what: &str, report: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} is not a valid report:\n{}",
        errors.join("\n")
    );
}

/// `run`'s reports written into `out/<run-id>/` by `sitegen export`'s
/// library call, each file with the report it holds.
pub fn export(data: &Path, out: &Path, run: &str) -> sitegen::app::export::Exported {
    let opts = sitegen::app::export::ExportOptions {
        data: data.to_path_buf(),
        out: out.to_path_buf(),
        runs: vec![run.to_string()],
    };
    let mut done = sitegen::app::export::export_llm_d_reports(&opts).unwrap();
    assert_eq!(done.len(), 1);
    done.remove(0)
}

/// The files of an export, in order.
pub fn files(exported: &sitegen::app::export::Exported) -> Vec<PathBuf> {
    exported.files.iter().map(|(f, _)| f.clone()).collect()
}
