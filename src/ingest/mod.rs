//! Importers of measurements made elsewhere: one file per foreign format.
//!
//! Each importer reads a whole input into cells and whatever run metadata the
//! file says (a partial `run.json`); a `--meta` JSON file fills in or
//! overrides the cards; [`crate::store`] writes the runs only after every
//! input was read, so a bad file writes nothing.

pub mod burst;
pub mod csv;
pub mod guidellm;
pub mod json;
pub mod llm_decode_bench;
pub mod page;
pub mod sglang_bench;
pub mod vllm_bench;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::model::{Cell, Run, RunMeta, SCHEMA_VERSION};

/// A format `sitegen ingest` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The text of a published "Speed test matrix" page.
    Page,
    /// The measurement table as a run page's `measurements.csv` exports it.
    Csv,
    /// The results JSON of llm_decode_bench.py (llm-inference-bench).
    LlmDecodeBench,
    /// `vllm bench serve --save-result` JSON, one file per burst.
    VllmBench,
    /// guidellm's `benchmarks.json`.
    Guidellm,
    /// SGLang `bench_serving --output-file` JSONL, one line per burst.
    SglangBench,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Page,
        Format::Csv,
        Format::LlmDecodeBench,
        Format::VllmBench,
        Format::Guidellm,
        Format::SglangBench,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Page => "page",
            Format::Csv => "csv",
            Format::LlmDecodeBench => "llm-decode-bench",
            Format::VllmBench => "vllm-bench",
            Format::Guidellm => "guidellm",
            Format::SglangBench => "sglang-bench",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Recognises a format by a file's content: a page's first line, the CSV
    /// header, or the keys each tool's JSON (or first JSONL line) has.
    pub fn detect(text: &str) -> Option<Format> {
        if text.starts_with(page::FIRST_LINE) {
            return Some(Format::Page);
        }
        let first_line = text.lines().next().map(str::trim_end).unwrap_or_default();
        if crate::table::csv_columns(&first_line.split(',').collect::<Vec<_>>()).is_some() {
            return Some(Format::Csv);
        }
        let probe = Path::new("");
        if let Ok(v) = json::parse_python_json(probe, text) {
            if llm_decode_bench::looks_like(&v) {
                return Some(Format::LlmDecodeBench);
            }
            if vllm_bench::looks_like(&v) {
                return Some(Format::VllmBench);
            }
            if guidellm::looks_like(&v) {
                return Some(Format::Guidellm);
            }
        }
        let first_line = text.lines().find(|l| !l.trim().is_empty())?;
        json::parse_python_json(probe, first_line)
            .ok()
            .filter(sglang_bench::looks_like)
            .map(|_| Format::SglangBench)
    }

    /// Whether all the files given make one run (one file per cell) rather
    /// than one run each.
    fn one_run_from_all_files(self) -> bool {
        self == Format::VllmBench
    }

    fn read(self, inputs: &[(PathBuf, String)], id: &str) -> anyhow::Result<Imported> {
        let (file, text) = (&inputs[0].0, &inputs[0].1);
        Ok(match self {
            Format::Page => Imported::from_run(page::parse_page(file, text, id)?),
            Format::Csv => csv::parse_csv(file, text)?,
            Format::LlmDecodeBench => llm_decode_bench::parse(file, text)?,
            Format::VllmBench => vllm_bench::parse_files(inputs)?,
            Format::Guidellm => guidellm::parse(file, text)?,
            Format::SglangBench => sglang_bench::parse_jsonl(file, text)?,
        })
    }
}

/// What one input said: its cells and the run metadata it carries, as a
/// partial `run.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub meta: Value,
    pub cells: Vec<Cell>,
    pub notes_markdown: Option<String>,
}

impl Imported {
    fn from_run(run: Run) -> Imported {
        Imported {
            meta: serde_json::to_value(&run.meta).expect("run metadata is JSON"),
            cells: run.cells,
            notes_markdown: run.notes_markdown,
        }
    }
}

/// How `sitegen ingest` was asked to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The run id (one run only); default: the file name without extension.
    pub id: Option<String>,
    pub data: PathBuf,
    pub force: bool,
    /// A JSON file merged over what each input says (same fields as run.json).
    pub meta: Option<PathBuf>,
}

/// A file's name without its folder, as a run's `source` names it.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The run id a file becomes by default: its name without extension, lowercased.
pub fn default_run_id(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// Imports `files` in `format` (recognised from each file when `None`): one
/// run per file, or one run of them all for formats with a file per cell
/// (vllm-bench). Every file is read before anything is written. Returns
/// each run folder written with the format read.
pub fn import(
    format: Option<Format>,
    files: &[PathBuf],
    opts: &ImportOptions,
) -> anyhow::Result<Vec<(PathBuf, Format)>> {
    let patch = opts.meta.as_deref().map(read_meta_patch).transpose()?;
    let mut inputs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("{}: cannot read the file", file.display()))?;
        let format = match format {
            Some(f) => f,
            None => Format::detect(&text).with_context(|| {
                format!(
                    "{}: not a format sitegen recognises; name it: sitegen ingest {} FILE",
                    file.display(),
                    Format::ALL.map(Format::name).join("|")
                )
            })?,
        };
        inputs.push((format, file.clone(), text));
    }
    // Group the inputs into runs: one per file, except that all files of a
    // file-per-cell format make one run together.
    let mut groups: Vec<(Format, Vec<(PathBuf, String)>)> = Vec::new();
    for (format, file, text) in inputs {
        match groups
            .iter_mut()
            .find(|(f, _)| *f == format && f.one_run_from_all_files())
        {
            Some((_, group)) => group.push((file, text)),
            None => groups.push((format, vec![(file, text)])),
        }
    }
    if opts.id.is_some() && groups.len() != 1 {
        bail!(
            "--id names one run, and these files make {}: import them one run at a time",
            groups.len()
        );
    }
    let mut runs = Vec::new();
    for (format, group) in &groups {
        let first = &group[0].0;
        let run_id = match &opts.id {
            Some(id) => id.clone(),
            None if group.len() == 1 => default_run_id(first),
            None => bail!(
                "{} {} files make one run: name it with --id",
                group.len(),
                format.name()
            ),
        };
        crate::store::check_run_id(&run_id)
            .with_context(|| format!("{}: choose a run id with --id", first.display()))?;
        let imported = format.read(group, &run_id)?;
        let meta = finish_meta(first, imported.meta, patch.as_ref(), opts.meta.as_deref())?;
        let mut cells = imported.cells;
        cells.sort_by_key(Cell::key);
        runs.push((
            Run {
                id: run_id,
                meta,
                cells,
                notes_markdown: imported.notes_markdown,
            },
            *format,
        ));
    }
    for (run, _) in &runs {
        crate::store::check_run(&opts.data, run, opts.force)?;
    }
    let mut written = Vec::new();
    for (run, format) in &runs {
        written.push((
            crate::store::write_run(&opts.data, run, opts.force)?,
            *format,
        ));
    }
    Ok(written)
}

/// Imports published page texts (the `page` format), one run per file.
pub fn import_pages(
    files: &[PathBuf],
    id: Option<&str>,
    data_dir: &Path,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let opts = ImportOptions {
        id: id.map(str::to_string),
        data: data_dir.to_path_buf(),
        force,
        meta: None,
    };
    Ok(import(Some(Format::Page), files, &opts)?
        .into_iter()
        .map(|(dir, _)| dir)
        .collect())
}

fn read_meta_patch(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read --meta", path.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: line {}, column {}: not JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if !value.is_object() {
        bail!(
            "{}: expected a JSON object with run.json's fields",
            path.display()
        );
    }
    Ok(value)
}

/// The fields a run needs that a foreign file may not say, as JSON paths.
const REQUIRED: [&str; 5] = [
    "model",
    "hardware.gpu",
    "hardware.gpu_count",
    "engine.name",
    "run.decode_test",
];

/// A `--meta` object giving each missing path an example value.
fn missing_example(missing: &[&str]) -> Value {
    let mut example = serde_json::json!({});
    for path in missing {
        let value = match *path {
            "model" => Value::from("GLM-5.3-Flash"),
            "hardware.gpu" => Value::from("H200 SXM"),
            "hardware.gpu_count" => Value::from(4),
            "engine.name" => Value::from("vllm"),
            "run.decode_test" => Value::from("fixed_duration"),
            _ => Value::from("..."),
        };
        let mut patch = value;
        for key in path.rsplit('.') {
            patch = serde_json::json!({ key: patch });
        }
        json_patch::merge(&mut example, &patch);
    }
    example
}

fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(value, |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

/// What the file said, with `--meta` merged over it (RFC 7396: a field it
/// names replaces the file's, `null` removes one), as a checked [`RunMeta`].
/// Fields still missing are listed together with how to give them.
fn finish_meta(
    file: &Path,
    mut meta: Value,
    patch: Option<&Value>,
    patch_path: Option<&Path>,
) -> anyhow::Result<RunMeta> {
    if let Some(p) = patch {
        json_patch::merge(&mut meta, p);
    }
    let object = meta.as_object_mut().expect("metadata is a JSON object");
    object
        .entry("schema_version")
        .or_insert(Value::from(SCHEMA_VERSION));
    if let Some(model) = object.get("model").cloned() {
        object.entry("served_model").or_insert(model);
    }
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .filter(|path| lookup(&meta, path).is_none())
        .collect();
    if !missing.is_empty() {
        let example = missing_example(&missing);
        bail!(
            "{}: the file does not say {}: pass them in a JSON file with --meta, with \
             run.json's field names, e.g. {example}",
            file.display(),
            missing.join(", ")
        );
    }
    let mut meta: RunMeta = serde_path_to_error::deserialize(meta).map_err(|e| {
        let from = patch_path.map_or_else(String::new, |p| format!(" (with {})", p.display()));
        anyhow::anyhow!(
            "{}{from}: field `{}`: {}",
            file.display(),
            e.path(),
            e.inner()
        )
    })?;
    meta.launch_command = meta
        .launch_command
        .as_deref()
        .map(crate::redact::redact_command);
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_by_their_content() {
        let page = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pages/glm-5.3-flash-h200x4-vllm.txt"
        ))
        .unwrap();
        assert_eq!(Format::detect(&page), Some(Format::Page));
        let csv = format!("{}\nprefill,8192,1,valid,,1.0,,1.0,,,,,,\n", csv::header());
        assert_eq!(Format::detect(&csv), Some(Format::Csv));
        assert_eq!(Format::detect("{\"metadata\": {}}"), None);
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn missing_cards_are_listed_together_and_meta_fills_them() {
        let file = Path::new("results.csv");
        let err = finish_meta(file, serde_json::json!({"model": "M"}), None, None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("results.csv: the file does not say hardware.gpu, hardware.gpu_count, engine.name, run.decode_test"), "{err}");
        assert!(err.contains("--meta"), "{err}");
        let patch = serde_json::json!({
            "hardware": {"gpu": "H200 SXM", "gpu_count": 4}, "engine": {"name": "vllm"},
            "run": {"decode_test": "fixed_duration", "prefill_mode": "decode_warmup",
                    "seconds_per_measurement": 30, "max_output_tokens": 4096},
            "launch_command": "vllm serve m --api-key sk-secret"
        });
        let meta =
            finish_meta(file, serde_json::json!({"model": "M"}), Some(&patch), None).unwrap();
        assert_eq!(meta.served_model, "M");
        assert_eq!(meta.hardware.gpu_count, 4);
        assert_eq!(
            meta.launch_command.as_deref(),
            Some("vllm serve m --api-key <redacted>")
        );
        let wrong = serde_json::json!({"hardware": {"gpu_count": "four"}});
        let mut full = patch.clone();
        json_patch::merge(&mut full, &wrong);
        let err = finish_meta(
            file,
            serde_json::json!({"model": "M"}),
            Some(&full),
            Some(Path::new("m.json")),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("results.csv (with m.json): field `hardware.gpu_count`"),
            "{err}"
        );
    }
}
