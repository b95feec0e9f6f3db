//! Importers of measurements made elsewhere: one file per foreign format.
//!
//! Each importer reads a whole input into cells and whatever run metadata the
//! file says (a partial `run.json`); a `--meta` JSON file fills in or
//! overrides the cards; [`crate::store`] writes the runs only after every
//! input was read, so a bad file writes nothing.

pub mod aiperf;
pub mod aiperf_records;
pub mod burst;
pub mod csv;
pub mod genai_bench;
pub mod genai_perf;
mod gpu_summary;
pub mod guidellm;
pub mod inference_perf;
pub mod json;
pub mod llama_bench;
pub mod llm_d_report;
pub mod llm_decode_bench;
pub mod llmperf;
pub mod llmperf_bench;
pub mod mlperf;
pub mod page;
pub mod sglang_bench;
pub mod vllm_bench;
pub mod vllm_offline;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::model::paced::PacedPoint;
use crate::model::{Cell, DecodeCell, Run, RunMeta, SCHEMA_VERSION};

/// One format `sitegen ingest` reads, declared in its importer's file: a
/// new format is one new file and one row of [`IMPORTERS`].
pub struct Importer {
    /// The name on the command line.
    pub name: &'static str,
    /// Whether a file is this format, by its content.
    pub detect: fn(&Sniffed) -> bool,
    /// Whether all the files given make one run (one file per cell)
    /// rather than one run each.
    pub one_run_from_all_files: bool,
    /// Reads the files (one, or all of a one-run group), with what the
    /// person gave beside them.
    pub read: fn(&Inputs, &Given) -> anyhow::Result<Imported>,
}

/// The files an importer reads, each with its text.
pub type Inputs = [(PathBuf, String)];

/// What the person gave on the command line that an importer may need.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// The run id the files become.
    pub id: String,
    /// `--context`: the context in tokens, for a file that does not state
    /// it (used only where the file is silent, and said so in the cell).
    pub context_tokens: Option<u64>,
    /// `--gpu-index`: which GPUs of a file's telemetry the server ran on.
    pub gpu_index: Option<Vec<u32>>,
    /// The run's GPU count as the person gave it (`--gpu-count`, `--meta`).
    pub gpu_count: Option<u32>,
}

/// Every importer, in the order detection asks them.
pub const IMPORTERS: &[&Importer] = &[
    &page::IMPORTER,
    &csv::IMPORTER,
    &llm_decode_bench::IMPORTER,
    &vllm_bench::IMPORTER,
    &guidellm::IMPORTER,
    &genai_perf::IMPORTER,
    &aiperf::IMPORTER,
    &vllm_offline::IMPORTER,
    &llama_bench::IMPORTER,
    &llmperf::IMPORTER,
    &sglang_bench::IMPORTER,
    &genai_bench::IMPORTER,
    &llmperf_bench::IMPORTER,
    &aiperf_records::IMPORTER,
    &inference_perf::IMPORTER,
    &mlperf::IMPORTER,
    &llm_d_report::IMPORTER,
];

/// A file's text read once for detection: whole as JSON (or YAML where it
/// looks like guidellm's or an llm-d Benchmark Report, v0.1's included), and its first
/// non-empty line as JSON.
pub struct Sniffed<'a> {
    pub text: &'a str,
    pub whole: Option<Value>,
    pub first_line: Option<Value>,
}

impl<'a> Sniffed<'a> {
    pub fn new(text: &'a str) -> Sniffed<'a> {
        let probe = Path::new("");
        let trimmed = text.trim_start();
        let whole = if trimmed.starts_with(['{', '[']) {
            json::parse_python_json(probe, text).ok()
        } else if text.lines().any(|l| {
            ["benchmarks:", "results:", "metrics:"]
                .iter()
                .any(|k| l.starts_with(k))
        }) {
            json::parse_yaml(probe, text).ok()
        } else {
            None
        };
        let first_line = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| json::parse_python_json(probe, l).ok());
        Sniffed {
            text,
            whole,
            first_line,
        }
    }

    /// The whole file's JSON, when it is.
    pub fn json(&self) -> Option<&Value> {
        self.whole.as_ref()
    }
}

/// A format `sitegen ingest` reads: a handle on its importer.
#[derive(Clone, Copy)]
pub struct Format(&'static Importer);

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Format {}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Format {
    /// Every format, in the order detection asks them.
    pub fn all() -> impl Iterator<Item = Format> {
        IMPORTERS.iter().map(|i| Format(i))
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The format of that name.
    pub fn named(name: &str) -> Option<Format> {
        Format::all().find(|f| f.name() == name)
    }

    /// Every format's name, for messages: "page, csv, ...".
    pub fn names() -> Vec<&'static str> {
        Format::all().map(Format::name).collect()
    }

    /// Recognises a format by a file's content: the first importer whose
    /// detection says so.
    pub fn detect(text: &str) -> Option<Format> {
        let sniffed = Sniffed::new(text);
        Format::all().find(|f| (f.0.detect)(&sniffed))
    }

    fn one_run_from_all_files(self) -> bool {
        self.0.one_run_from_all_files
    }

    fn read(self, inputs: &[(PathBuf, String)], given: &Given) -> anyhow::Result<Imported> {
        (self.0.read)(inputs, given)
    }
}

/// What one input said: its cells and the run metadata it carries, as a
/// partial `run.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub meta: Value,
    pub cells: Vec<Cell>,
    /// Points measured at a paced request rate: never cells.
    pub paced: Vec<PacedPoint>,
    pub notes_markdown: Option<String>,
    /// What was read but could not be put in a cell, one sentence each.
    pub warnings: Vec<String>,
    /// The tool version or layout recognised, e.g. "guidellm 0.8.1".
    pub layout: String,
    /// When not empty, the input is several runs: different settings one
    /// file measured (llama-bench's generation lengths), which must never be
    /// merged as repeats. Each is a run of its own, its id the run id
    /// followed by the suffix ("-tg128"); these cells are then empty and
    /// these warnings said of every part.
    pub split: Vec<(String, Imported)>,
}

impl Imported {
    /// The decode cells of a burst tool's files, with what they said of the run.
    pub(crate) fn of_decode_cells(meta: Value, cells: Vec<DecodeCell>, layout: String) -> Imported {
        Imported {
            meta,
            cells: cells.into_iter().map(Cell::Decode).collect(),
            paced: Vec::new(),
            notes_markdown: None,
            warnings: Vec::new(),
            layout,
            split: Vec::new(),
        }
    }

    /// The runs this input makes, each with the suffix of its run id: itself
    /// (no suffix), or its parts, each carrying the warnings said of all.
    fn into_runs(self) -> Vec<(String, Imported)> {
        if self.split.is_empty() {
            return vec![(String::new(), self)];
        }
        let shared = self.warnings;
        self.split
            .into_iter()
            .map(|(suffix, mut part)| {
                let mut warnings = shared.clone();
                warnings.append(&mut part.warnings);
                part.warnings = warnings;
                (suffix, part)
            })
            .collect()
    }

    pub(crate) fn from_run(run: Run) -> Imported {
        Imported {
            meta: serde_json::to_value(&run.meta).expect("run metadata is JSON"),
            cells: run.cells,
            paced: run.paced,
            notes_markdown: run.notes_markdown,
            warnings: Vec::new(),
            layout: "published Speed test matrix page".into(),
            split: Vec::new(),
        }
    }
}

/// One run an import makes (or, in a dry run, would make).
#[derive(Debug)]
pub struct Outcome {
    pub id: String,
    pub format: Format,
    /// The tool version or layout recognised.
    pub layout: String,
    pub files: Vec<PathBuf>,
    /// The run folder written, or that a dry run would write.
    pub dir: PathBuf,
    /// The run, cards merged: what the files said with `--meta` over it.
    pub meta: Value,
    pub cells: Vec<Cell>,
    pub paced: Vec<PacedPoint>,
    /// Card fields (dotted paths) the file stated.
    pub from_file: Vec<String>,
    /// Card fields `--meta` gave or replaced.
    pub from_meta: Vec<String>,
    /// Required card fields neither gave (a dry run lists them; an import fails).
    pub missing: Vec<&'static str>,
    pub warnings: Vec<String>,
}

impl Outcome {
    /// What the import read, for the person running it: the format and
    /// version recognised, where each card came from, and the cells (every
    /// one, with its status and total tok/s).
    pub fn summary(&self, dry_run: bool) -> String {
        use crate::model::format::{context_label, tok_per_s};
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let mut out = format!(
            "{}: {} ({})\n",
            files.join(", "),
            self.format.name(),
            self.layout
        );
        let cards = |paths: &[String]| -> String {
            let shown: Vec<String> = paths
                .iter()
                .filter(|p| !p.starts_with("source"))
                .map(|p| match lookup(&self.meta, p) {
                    Some(Value::String(s)) => format!("{p} = {s}"),
                    Some(v) => format!("{p} = {v}"),
                    None => format!("{p} removed"),
                })
                .collect();
            if shown.is_empty() {
                "none".into()
            } else {
                shown.join(", ")
            }
        };
        let file_only: Vec<String> = self
            .from_file
            .iter()
            .filter(|p| !self.from_meta.contains(p))
            .cloned()
            .collect();
        out.push_str(&format!("  cards from the file: {}\n", cards(&file_only)));
        if !self.from_meta.is_empty() {
            out.push_str(&format!(
                "  cards given (flags, --meta): {}\n",
                cards(&self.from_meta)
            ));
        }
        if !self.missing.is_empty() {
            out.push_str(&format!(
                "  missing (give them with --gpu, --gpu-count, --engine, --model or --meta): {}\n",
                self.missing.join(", ")
            ));
        }
        let verb = if dry_run { "would write" } else { "wrote" };
        out.push_str(&format!(
            "  {verb} {} with {}:\n",
            self.dir.display(),
            crate::model::format::counted(self.cells.len(), "cell")
        ));
        for cell in &self.cells {
            let line = match cell {
                Cell::Prefill(p) => format!(
                    "prefill {:>6}: {}{}",
                    context_label(p.context_tokens),
                    p.status.label(),
                    p.prompt_tok_per_s
                        .map_or_else(String::new, |v| format!(", {} prompt tok/s", tok_per_s(v)))
                ),
                Cell::Decode(d) => format!(
                    "decode  {:>6} × {:<4}: {}{}{}",
                    context_label(d.context_tokens),
                    d.concurrency,
                    d.status.label(),
                    d.total_tok_per_s
                        .map_or_else(String::new, |v| format!(", {} tok/s", tok_per_s(v))),
                    d.reason
                        .as_ref()
                        .map_or_else(String::new, |r| format!(" ({r})"))
                ),
            };
            out.push_str(&format!("    {line}\n"));
        }
        if !self.paced.is_empty() {
            out.push_str(&format!(
                "  and {} (requests sent at a rate; never in a concurrency matrix):\n",
                crate::model::format::counted(self.paced.len(), "paced point")
            ));
        }
        for p in &self.paced {
            let cap = p
                .load
                .max_concurrency
                .map_or_else(String::new, |n| format!(", at most {n} in flight"));
            out.push_str(&format!(
                "    paced   {:>6} at {} req/s{cap}: {}{}{}\n",
                context_label(p.context_tokens),
                crate::model::format::rate_per_s(p.load.requested_per_s),
                p.status.label(),
                p.total_tok_per_s
                    .map_or_else(String::new, |v| format!(", {} tok/s", tok_per_s(v))),
                p.reason
                    .as_ref()
                    .map_or_else(String::new, |r| format!(" ({r})"))
            ));
        }
        for w in &self.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        out
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
    /// Card fields given as flags (`--gpu` ...), a partial run.json under
    /// `meta`'s (an empty object, or null, when none).
    pub cards: Value,
    /// `--context`: the context of files that do not state it.
    pub context_tokens: Option<u64>,
    /// `--gpu-index`: the GPUs of a file's telemetry the server ran on.
    pub gpu_index: Option<Vec<u32>>,
    /// Read and check everything, write nothing.
    pub dry_run: bool,
}

/// A file's name without its folder, as a run's `source` names it.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The run id a file becomes by default: its name without extension, lowercased.
/// Characters a run id cannot hold ("run=0" from a vllm sweep) become "-".
pub fn default_run_id(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    stem.chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// Imports `files` in `format` (recognised from each file when `None`): one
/// run per file, or one run of them all for formats with a file per cell
/// (vllm-bench, aiperf). Every file is read before anything is written; a
/// dry run writes nothing. Returns each run with what it was made of.
pub fn import(
    format: Option<Format>,
    files: &[PathBuf],
    opts: &ImportOptions,
) -> anyhow::Result<Vec<Outcome>> {
    let patch = given_cards(&opts.cards, opts.meta.as_deref())?;
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
                    Format::names().join("|")
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
    // Read every group first: a bad file writes nothing.
    let from_meta = patch.as_ref().map(leaf_paths).unwrap_or_default();
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
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
        let given = Given {
            id: run_id.clone(),
            context_tokens: opts.context_tokens,
            gpu_index: opts.gpu_index.clone(),
            gpu_count: patch
                .as_ref()
                .and_then(|p| p.pointer("/hardware/gpu_count"))
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
        };
        let imported = format.read(group, &given)?;
        for (suffix, imported) in imported.into_runs() {
            let run_id = format!("{run_id}{suffix}");
            crate::store::check_run_id(&run_id)
                .with_context(|| format!("{}: choose a run id with --id", first.display()))?;
            let from_file = leaf_paths(&imported.meta);
            let (meta, missing) = merge_meta(imported.meta, patch.as_ref());
            let mut cells = imported.cells;
            cells.sort_by_key(Cell::key);
            let mut paced = imported.paced;
            paced.sort_by_key(PacedPoint::key);
            notes.push(imported.notes_markdown);
            outcomes.push(Outcome {
                id: run_id.clone(),
                format: *format,
                layout: imported.layout,
                files: group.iter().map(|(f, _)| f.clone()).collect(),
                dir: opts.data.join(&run_id),
                meta,
                cells,
                paced,
                from_file,
                from_meta: from_meta.clone(),
                missing,
                warnings: imported.warnings,
            });
        }
    }
    if opts.dry_run {
        return Ok(outcomes);
    }
    let mut runs = Vec::new();
    for (outcome, notes_markdown) in outcomes.iter().zip(notes) {
        let meta = finish_meta(
            &outcome.files[0],
            outcome.meta.clone(),
            &outcome.missing,
            opts.meta.as_deref(),
        )?;
        let run = Run {
            id: outcome.id.clone(),
            meta,
            cells: outcome.cells.clone(),
            paced: outcome.paced.clone(),
            // No format sitegen imports states a sessions workload yet
            // (docs/data-format.md, "Sessions").
            sessions: Vec::new(),
            notes_markdown,
        };
        crate::store::check_run(&opts.data, &run, opts.force)?;
        runs.push(run);
    }
    for run in &runs {
        crate::store::write_run(&opts.data, run, opts.force)?;
    }
    Ok(outcomes)
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
        cards: Value::Null,
        context_tokens: None,
        gpu_index: None,
        dry_run: false,
    };
    Ok(import(Format::named("page"), files, &opts)?
        .into_iter()
        .map(|o| o.dir)
        .collect())
}

/// The cards the person gave: the flags, with `--meta` merged over them
/// (as `sitegen run` merges it); `None` when neither gave any.
fn given_cards(flags: &Value, meta: Option<&Path>) -> anyhow::Result<Option<Value>> {
    let mut patch = match flags {
        Value::Object(m) if !m.is_empty() => Some(flags.clone()),
        _ => None,
    };
    if let Some(path) = meta {
        let file = read_meta_patch(path)?;
        match &mut patch {
            Some(p) => json_patch::merge(p, &file),
            None => patch = Some(file),
        }
    }
    Ok(patch)
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

/// An example value of a required card field.
fn example_value(path: &str) -> Value {
    match path {
        "model" => Value::from("GLM-5.3-Flash"),
        "hardware.gpu" => Value::from("H100"),
        "hardware.gpu_count" => Value::from(4),
        "engine.name" => Value::from("vllm"),
        "run.decode_test" => Value::from("fixed_duration"),
        _ => Value::from("..."),
    }
}

/// A `--meta` object giving each missing path an example value.
fn missing_example(missing: &[&str]) -> Value {
    let mut example = serde_json::json!({});
    for path in missing {
        let mut patch = example_value(path);
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

/// Every leaf of a JSON object as a dotted path ("hardware.gpu"); a leaf
/// is a value that is not an object.
fn leaf_paths(value: &Value) -> Vec<String> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, v, out);
                }
            }
            Value::Null => {}
            _ => out.push(prefix.to_string()),
        }
    }
    let mut out = Vec::new();
    walk("", value, &mut out);
    out
}

/// What the file said, with `--meta` merged over it (RFC 7396: a field it
/// names replaces the file's, `null` removes one), and the required fields
/// still missing.
fn merge_meta(mut meta: Value, patch: Option<&Value>) -> (Value, Vec<&'static str>) {
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
    let missing = REQUIRED
        .into_iter()
        .filter(|path| lookup(&meta, path).is_none())
        .collect();
    (meta, missing)
}

/// The merged metadata as a checked [`RunMeta`]; missing fields are listed
/// together with how to give them.
fn finish_meta(
    file: &Path,
    meta: Value,
    missing: &[&str],
    patch_path: Option<&Path>,
) -> anyhow::Result<RunMeta> {
    if !missing.is_empty() {
        let example = missing_example(missing);
        let flags: Vec<String> = missing
            .iter()
            .filter_map(|p| {
                let flag = crate::model::cards::MetaFlags::flag_of(p)?;
                Some(match example_value(p) {
                    Value::String(v) => format!("{flag} {v}"),
                    v => format!("{flag} {v}"),
                })
            })
            .collect();
        let by_flag = if flags.len() == missing.len() {
            format!("give them with {}, or ", flags.join(" "))
        } else {
            String::new()
        };
        bail!(
            "{}: the file does not say {}: {by_flag}pass them in a JSON file with --meta, with \
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
        .map(crate::model::redact::redact_command);
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
        assert_eq!(Format::detect(&page), Format::named("page"));
        let csv = format!("{}\nprefill,8192,1,valid,,1.0,,1.0,,,,,,\n", csv::header());
        assert_eq!(Format::detect(&csv), Format::named("csv"));
        assert_eq!(Format::detect("{\"metadata\": {}}"), None);
        let names = Format::names();
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn missing_cards_are_listed_together_and_meta_fills_them() {
        let file = Path::new("results.csv");
        let finish = |meta: Value, patch: Option<&Value>, path: Option<&Path>| {
            let (merged, missing) = merge_meta(meta, patch);
            finish_meta(file, merged, &missing, path)
        };
        let err = finish(serde_json::json!({"model": "M"}), None, None)
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
        let meta = finish(serde_json::json!({"model": "M"}), Some(&patch), None).unwrap();
        assert_eq!(meta.served_model, "M");
        assert_eq!(meta.hardware.gpu_count, 4);
        assert_eq!(
            meta.launch_command.as_deref(),
            Some("vllm serve m --api-key <redacted>")
        );
        let wrong = serde_json::json!({"hardware": {"gpu_count": "four"}});
        let mut full = patch.clone();
        json_patch::merge(&mut full, &wrong);
        let err = finish(
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
