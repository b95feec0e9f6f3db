//! Imports the text of a published "Speed test matrix" page (the form of the
//! pages in `tests/fixtures/pages/`) into a [`Run`].
//!
//! The cards, the launch command and the full measurement table are read as
//! data. The title, subtitle, prefill chart, decode matrix and legends are
//! views of that data: they are re-derived from it and must match the page
//! letter for letter, so a page that contradicts itself, or one this parser
//! misreads, is an error and never a silently wrong run.

use std::path::{Path, PathBuf};

use crate::model::format::{self, ParseError};
use crate::model::labels;
use crate::model::reason::{Part, Reason};
use crate::model::table;
use crate::model::{
    BenchmarkTool, Cell, DecodeCell, Engine, Hardware, PrefillCell, Run, RunMeta, RunSettings,
    SCHEMA_VERSION, Status,
};

/// A page that could not be read: the file, the 1-based line, what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: expected {expected}, found {found:?}", file.display())]
pub struct PageError {
    pub file: PathBuf,
    pub line: usize,
    pub expected: String,
    pub found: String,
}

/// Reads `text`, the content of the page file `file`, as run `id`.
/// The first line of every page.
pub(crate) const FIRST_LINE: &str = "Speed test matrix";

pub const IMPORTER: super::Importer = super::Importer {
    name: "page",
    detect: |s| s.text.starts_with(FIRST_LINE),
    one_run_from_all_files: false,
    read: |inputs, given| {
        Ok(super::Imported::from_run(parse_page(
            &inputs[0].0,
            &inputs[0].1,
            &given.id,
        )?))
    },
};

pub fn parse_page(file: &Path, text: &str, id: &str) -> Result<Run, PageError> {
    Parser::new(file, text).parse(id)
}

struct Parser<'a> {
    file: &'a Path,
    lines: Vec<&'a str>,
    /// Index of the next line to read.
    pos: usize,
}

/// A card: its (line number, label, value) rows.
type Card<'a> = Vec<(usize, &'a str, &'a str)>;

const HARDWARE_FIELDS: &[&str] = &["Type", "GPU", "GPU count", "VRAM", "OS"];
const ENGINE_FIELDS: &[&str] = &[
    "Engine",
    "Version",
    "Quantization",
    "Backend",
    "Repository",
    "Build",
    "Commit",
];
const RUN_FIELDS: &[&str] = &[
    "Served model",
    "Revision",
    "Benchmark tool",
    "Decode test",
    "Prefill mode",
    "Time per measurement",
    "Max output",
];

impl<'a> Parser<'a> {
    fn new(file: &'a Path, text: &'a str) -> Self {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Parser {
            file,
            lines: text.lines().map(|l| l.trim_end_matches('\r')).collect(),
            pos: 0,
        }
    }

    fn error(
        &self,
        line: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> PageError {
        PageError {
            file: self.file.to_path_buf(),
            line,
            expected: expected.into(),
            found: found.into(),
        }
    }

    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.pos).copied()
    }

    /// The next line and its 1-based number.
    fn next(&mut self, expected: &str) -> Result<(usize, &'a str), PageError> {
        match self.lines.get(self.pos) {
            Some(line) => {
                self.pos += 1;
                Ok((self.pos, line))
            }
            None => Err(self.error(self.pos + 1, expected, "end of file")),
        }
    }

    fn expect_line(&mut self, exact: &str) -> Result<usize, PageError> {
        let (n, line) = self.next(&format!("{exact:?}"))?;
        if line != exact {
            return Err(self.error(n, format!("{exact:?}"), line));
        }
        Ok(n)
    }

    /// A line starting with `prefix`; returns the rest.
    fn expect_prefix(&mut self, prefix: &str) -> Result<(usize, &'a str), PageError> {
        let (n, line) = self.next(&format!("a line starting with {prefix:?}"))?;
        line.strip_prefix(prefix)
            .map(|rest| (n, rest))
            .ok_or_else(|| self.error(n, format!("a line starting with {prefix:?}"), line))
    }

    /// "- Label" / "- value" pairs up to the line `until`.
    fn card(&mut self, name: &str, fields: &[&str], until: &str) -> Result<Card<'a>, PageError> {
        self.expect_line(name)?;
        let mut rows: Card<'a> = Vec::new();
        while self.peek() != Some(until) {
            let (n, label_line) = self.next(&format!("a {name} field or {until:?}"))?;
            let label = label_line.strip_prefix("- ").unwrap_or(label_line);
            if !fields.contains(&label) {
                return Err(self.error(
                    n,
                    format!("a {name} field ({}) or {until:?}", fields.join(", ")),
                    label_line,
                ));
            }
            if rows.iter().any(|(_, l, _)| *l == label) {
                return Err(self.error(n, format!("each {name} field once"), label_line));
            }
            let (vn, value_line) = self.next(&format!("the value of {label}"))?;
            // Published pages sometimes lose the bullet of a value (GLM's Commit).
            let value = value_line.strip_prefix("- ").unwrap_or(value_line).trim();
            if value.is_empty() {
                return Err(self.error(vn, format!("the value of {label}"), value_line));
            }
            rows.push((vn, label, value));
        }
        Ok(rows)
    }

    fn parse(mut self, id: &str) -> Result<Run, PageError> {
        self.expect_line(FIRST_LINE)?;
        let (title_line, title) = self.next("the page title")?;
        let (subtitle_line, subtitle) = self.next("the subtitle")?;
        let hardware_card = self.card("Hardware", HARDWARE_FIELDS, "Engine")?;
        let engine_card = self.card("Engine", ENGINE_FIELDS, "Run")?;
        let run_card = self.card("Run", RUN_FIELDS, "Launch command")?;
        self.expect_line("Launch command")?;
        let launch_command = self.launch_command()?;

        let (chart_start, first_chart) = self.expect_prefix(labels::PREFILL_CAPTION)?;
        let mut chart_rows = vec![(chart_start, first_chart)];
        while self.peek().is_some_and(|l| l != "Sustained decode") {
            chart_rows.push(self.next("a prefill chart label")?);
        }
        self.expect_line("Sustained decode")?;
        let (header_line, header) = self.expect_prefix(labels::DECODE_CAPTION)?;
        self.expect_prefix("|---")?;
        let mut matrix_rows = Vec::new();
        while self.peek().is_some_and(|l| l.starts_with('|')) {
            matrix_rows.push(self.next("a decode matrix row")?);
        }
        let matrix_legend = self.next("the decode matrix legend")?;
        self.expect_line(labels::TTFT_NOTE)?;
        self.expect_line("All measurements")?;
        let (table_header_line, table_header) = self.expect_prefix(labels::TABLE_NOTE)?;
        let expected_header = markdown_row(&table::page_headers());
        if table_header != expected_header {
            return Err(self.error(table_header_line, expected_header, table_header));
        }
        self.expect_prefix("|---")?;
        let mut cells = Vec::new();
        while self.peek().is_some_and(|l| l.starts_with('|')) {
            let (n, line) = self.next("a measurement row")?;
            cells.push((n, self.table_row(n, line)?));
        }
        let table_legend = self.next("the measurement table legend")?;
        while let Some(extra) = self.peek() {
            let (n, _) = self.next("")?;
            if !extra.trim().is_empty() {
                return Err(self.error(n, "the end of the page", extra));
            }
        }

        let meta = self.meta(
            &hardware_card,
            &engine_card,
            &run_card,
            launch_command,
            title_line,
            title,
        )?;
        let mut run = Run {
            id: id.to_string(),
            meta,
            cells: Vec::new(),
            paced: Vec::new(),
            sessions: Vec::new(),
            notes_markdown: None,
        };
        let mut seen = std::collections::HashMap::new();
        for (n, cell) in cells {
            if let Some(first) = seen.insert(cell.key(), n) {
                return Err(self.error(
                    n,
                    format!("one row per cell (line {first} has this one)"),
                    self.lines[n - 1],
                ));
            }
            run.cells.push(cell);
        }
        run.cells.sort_by_key(Cell::key);

        // The views must agree with the data.
        self.check_subtitle(&run, subtitle_line, subtitle)?;
        self.check_chart(&run, &chart_rows)?;
        self.check_matrix(&run, header_line, header, &matrix_rows)?;
        let legend = labels::legend_sentences(run.decode_cells().map(|c| c.status)).join(" ");
        for (n, line) in [matrix_legend, table_legend] {
            if line != legend {
                return Err(self.error(n, format!("the legend {legend:?}"), line));
            }
        }
        Ok(run)
    }

    /// The launch command is one line. The page text may run the next heading
    /// ("Prefill") into it.
    fn launch_command(&mut self) -> Result<Option<String>, PageError> {
        let (n, line) = self.next("the launch command")?;
        if self.peek() == Some("Prefill") {
            self.pos += 1;
            return Ok(Some(line.to_string()));
        }
        match line.strip_suffix("Prefill") {
            Some(cmd) if !cmd.trim().is_empty() => Ok(Some(cmd.to_string())),
            _ => Err(self.error(n, "the launch command followed by \"Prefill\"", line)),
        }
    }

    fn meta(
        &self,
        hardware: &Card<'a>,
        engine: &Card<'a>,
        run: &Card<'a>,
        launch_command: Option<String>,
        title_line: usize,
        title: &str,
    ) -> Result<RunMeta, PageError> {
        let get = |card: &Card<'a>, label: &str| {
            card.iter()
                .find(|(_, l, _)| *l == label)
                .map(|(n, _, v)| (*n, *v))
        };
        let owned = |card: &Card<'a>, label: &str| get(card, label).map(|(_, v)| v.to_string());
        let required = |card: &Card<'a>, name: &str, label: &str| {
            get(card, label).ok_or_else(|| {
                self.error(
                    title_line,
                    format!("a {label} field in the {name} card"),
                    "none",
                )
            })
        };

        let (n, count_text) = required(hardware, "Hardware", "GPU count")?;
        let gpu_count: u32 = count_text
            .parse()
            .map_err(|_| self.error(n, "a whole number of GPUs", count_text))?;
        let vram_per_gpu_gb = match get(hardware, "VRAM") {
            None => None,
            Some((n, text)) => Some(self.vram(n, text, gpu_count)?),
        };
        let hardware = Hardware {
            kind: owned(hardware, "Type"),
            gpu: required(hardware, "Hardware", "GPU")?.1.to_string(),
            gpu_count,
            vram_per_gpu_gb,
            os: owned(hardware, "OS"),
        };

        let engine = Engine {
            name: required(engine, "Engine", "Engine")?.1.to_string(),
            version: owned(engine, "Version"),
            quantization: owned(engine, "Quantization"),
            backend: owned(engine, "Backend"),
            repository: owned(engine, "Repository"),
            build: owned(engine, "Build"),
            commit: owned(engine, "Commit"),
        };

        let fixed_duration = labels::decode_test_label(crate::model::DecodeTest::FixedDuration);
        let decode_test = required(run, "Run", "Decode test")?;
        let decode_test =
            self.known_label(decode_test, labels::parse_decode_test_label, fixed_duration)?;
        let warmup = labels::prefill_mode_label(crate::model::PrefillMode::DecodeWarmup);
        let prefill_mode = required(run, "Run", "Prefill mode")?;
        let prefill_mode =
            self.known_label(prefill_mode, labels::parse_prefill_mode_label, warmup)?;
        let (n, text) = required(run, "Run", "Time per measurement")?;
        let seconds_per_measurement =
            format::parse_seconds(text).map_err(|e| self.parse_error(n, e))?;
        let (n, text) = required(run, "Run", "Max output")?;
        let max_output_tokens = text
            .strip_suffix(" tokens")
            .and_then(|t| format::parse_count(t).ok())
            .and_then(|t| u32::try_from(t).ok())
            .ok_or_else(|| self.error(n, "a token count like 4,096 tokens", text))?;
        let settings = RunSettings {
            revision: owned(run, "Revision"),
            benchmark_tool: get(run, "Benchmark tool").map(|(_, t)| benchmark_tool(t)),
            decode_test,
            prefill_mode: Some(prefill_mode),
            seconds_per_measurement: Some(seconds_per_measurement),
            max_output_tokens: Some(max_output_tokens),
            endpoint: None,
            token_count: None,
        };

        let hardware_label = labels::hardware_label(&hardware);
        let model = title
            .strip_suffix(&format!(" on {hardware_label}"))
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| {
                self.error(
                    title_line,
                    format!("a title \"<model> on {hardware_label}\""),
                    title,
                )
            })?;

        Ok(RunMeta {
            schema_version: SCHEMA_VERSION,
            model: model.to_string(),
            served_model: required(run, "Run", "Served model")?.1.to_string(),
            hardware,
            engine,
            run: settings,
            launch_command,
            source: Some(format!(
                "Imported from the published page {}; figures are as the page displays them (rounded).",
                self.file
                    .file_name()
                    .map(|f| f.to_string_lossy())
                    .unwrap_or_default()
            )),
            // A published page does not say when it was measured.
            measured_at: None,
        })
    }

    /// "564 GB (4 × 141 GB)" -> 141, checking the total and the GPU count.
    fn vram(&self, n: usize, text: &str, gpu_count: u32) -> Result<u32, PageError> {
        let expected = format!("VRAM like \"564 GB ({gpu_count} × 141 GB)\"");
        let per_gpu = text
            .split_once(" × ")
            .and_then(|(_, rest)| rest.strip_suffix(" GB)"))
            .and_then(|gb| gb.parse::<u32>().ok())
            .ok_or_else(|| self.error(n, expected.clone(), text))?;
        let hw = Hardware {
            kind: None,
            gpu: String::new(),
            gpu_count,
            vram_per_gpu_gb: Some(per_gpu),
            os: None,
        };
        let canonical = labels::vram_label(&hw).unwrap_or_default();
        if canonical != text {
            return Err(self.error(
                n,
                format!("{canonical:?} (the total is GPU count × per-GPU)"),
                text,
            ));
        }
        Ok(per_gpu)
    }

    /// A card value that must be one of a few labels (`known`), read with `parse`.
    fn known_label<T>(
        &self,
        (n, text): (usize, &str),
        parse: fn(&str) -> Option<T>,
        known: &str,
    ) -> Result<T, PageError> {
        parse(text).ok_or_else(|| self.error(n, format!("{known:?}"), text))
    }

    fn parse_error(&self, n: usize, e: ParseError) -> PageError {
        self.error(n, e.expected, e.found)
    }

    /// One row of the full measurement table.
    fn table_row(&self, n: usize, line: &str) -> Result<Cell, PageError> {
        let columns = table::page_headers().len();
        let cols = split_markdown_row(line)
            .filter(|c| c.len() == columns)
            .ok_or_else(|| self.error(n, format!("a table row of {columns} columns"), line))?;
        let mut cell = table::read_page_row(&cols).map_err(|(column, e)| {
            self.error(n, format!("{} in column {column:?}", e.expected), e.found)
        })?;
        if cell.status() == Status::Error {
            let reason = Some(Reason::of(Part::PageGivesNoReason));
            match &mut cell {
                Cell::Prefill(c) => c.reason = reason,
                Cell::Decode(c) => c.reason = reason,
            }
        }
        crate::store::validate_cell(self.file, &cell)
            .map_err(|e| self.error(n, "a row whose figures fit its status", e.to_string()))?;
        // Everything the row says must be what the cell shows again: columns
        // this parser does not keep (a prefill row's dashes) are checked here.
        let shown = markdown_row(&table::page_row(&cell));
        if shown != line {
            return Err(self.error(n, shown, line));
        }
        Ok(cell)
    }

    fn check_subtitle(&self, run: &Run, n: usize, subtitle: &str) -> Result<(), PageError> {
        // The page text runs the badges and the summary together ("FP88 contexts").
        let mut expected = labels::engine_badges(&run.meta.engine).join(" · ");
        let rest: Vec<String> = [labels::matrix_summary(run), labels::prefill_summary(run)]
            .into_iter()
            .flatten()
            .collect();
        expected.push_str(&rest.join(" · "));
        if subtitle != expected {
            return Err(self.error(n, format!("the subtitle {expected:?}"), subtitle));
        }
        Ok(())
    }

    fn check_chart(&self, run: &Run, rows: &[(usize, &str)]) -> Result<(), PageError> {
        let prefill: Vec<&PrefillCell> = run.prefill_cells().collect();
        for (i, (n, line)) in rows.iter().enumerate() {
            let Some(cell) = prefill.get(i) else {
                return Err(self.error(
                    *n,
                    "no more prefill chart labels than prefill rows in the table",
                    *line,
                ));
            };
            let expected = format!(
                "{} context{}{}",
                format::context_label(cell.context_tokens),
                cell.prompt_tok_per_s
                    .map(format::tok_per_s_short)
                    .unwrap_or_default(),
                cell.ttft_ms
                    .map(|t| format!("{} TTFT", format::millis(t)))
                    .unwrap_or_default(),
            );
            if *line != expected {
                return Err(self.error(
                    *n,
                    format!("{expected:?} (from the measurement table)"),
                    *line,
                ));
            }
        }
        if rows.len() < prefill.len() {
            let (n, _) = rows[rows.len() - 1];
            return Err(self.error(
                n,
                format!("{} prefill chart labels", prefill.len()),
                format!("{}", rows.len()),
            ));
        }
        Ok(())
    }

    fn check_matrix(
        &self,
        run: &Run,
        header_line: usize,
        header: &str,
        rows: &[(usize, &str)],
    ) -> Result<(), PageError> {
        let levels = run.concurrency_levels();
        let mut head = vec!["Context".to_string()];
        head.extend(levels.iter().map(u32::to_string));
        let expected = markdown_row(&head);
        if header != expected {
            return Err(self.error(
                header_line,
                format!("{expected:?} (from the measurement table)"),
                header,
            ));
        }
        let contexts = run.decode_contexts();
        if rows.len() != contexts.len() {
            let n = rows.last().map_or(header_line, |r| r.0);
            return Err(self.error(
                n,
                format!("{} matrix rows, one per decode context", contexts.len()),
                rows.len().to_string(),
            ));
        }
        for ((n, line), ctx) in rows.iter().zip(contexts) {
            let mut cols = vec![format::context_label(ctx)];
            cols.extend(levels.iter().map(|&c| match run.decode_cell(ctx, c) {
                Some(cell) => matrix_cell_text(cell),
                None => String::new(),
            }));
            let expected = markdown_row(&cols);
            if *line != expected {
                return Err(self.error(
                    *n,
                    format!("{expected:?} (from the measurement table)"),
                    *line,
                ));
            }
        }
        Ok(())
    }
}

/// "llm-inference-bench v0.6.2" -> name and version.
fn benchmark_tool(text: &str) -> BenchmarkTool {
    match text.rsplit_once(" v") {
        Some((name, version)) if version.starts_with(|c: char| c.is_ascii_digit()) => {
            BenchmarkTool {
                name: name.to_string(),
                version: Some(version.to_string()),
            }
        }
        _ => BenchmarkTool {
            name: text.to_string(),
            version: None,
        },
    }
}

/// A matrix cell as the page text shows it: "2,793.5Requests queued11,897 ms TTFT".
fn matrix_cell_text(cell: &DecodeCell) -> String {
    let mut text = String::new();
    if cell.status.has_figures() {
        if let Some(t) = cell.total_tok_per_s {
            text.push_str(&format::tok_per_s(t));
        }
        if cell.status != Status::Valid {
            text.push_str(cell.status.label());
        }
        if let Some(ttft) = cell.ttft_median_ms {
            text.push_str(&format!("{} TTFT", format::millis(ttft)));
        }
    } else {
        text.push_str(cell.status.label());
    }
    text
}

fn markdown_row(cols: &[impl AsRef<str>]) -> String {
    let cols: Vec<&str> = cols.iter().map(AsRef::as_ref).collect();
    format!("| {} |", cols.join(" | "))
}

fn split_markdown_row(line: &str) -> Option<Vec<&str>> {
    let inner = line.strip_prefix("| ")?.strip_suffix(" |")?;
    Some(inner.split(" | ").collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLM: &str = include_str!("../../tests/fixtures/pages/glm-5.3-flash-h200x4-vllm.txt");

    fn parse(text: &str) -> Result<Run, PageError> {
        parse_page(Path::new("page.txt"), text, "r")
    }

    #[test]
    fn reads_every_card_field_of_the_glm_page() {
        let run = parse(GLM).unwrap();
        let m = &run.meta;
        assert_eq!(m.model, "GLM-5.3-Flash");
        assert_eq!(m.served_model, "glm-5.3-flash-dflash2");
        assert_eq!(m.hardware.gpu, "H200 SXM");
        assert_eq!(m.hardware.vram_per_gpu_gb, Some(141));
        assert_eq!(m.engine.commit.as_deref(), Some("374e367e2b87"));
        assert_eq!(m.engine.version, None);
        let tool = m.run.benchmark_tool.as_ref().unwrap();
        assert_eq!(
            (tool.name.as_str(), tool.version.as_deref()),
            ("llm-inference-bench", Some("0.6.2"))
        );
        assert_eq!(m.run.max_output_tokens, Some(4096));
        assert!(
            m.launch_command
                .as_deref()
                .unwrap()
                .ends_with("\"disable_eagle_block_drop\":true}'")
        );
        assert_eq!(run.cells.len(), 73);
    }

    fn with_line(text: &str, line: usize, replacement: &str) -> String {
        let mut lines: Vec<&str> = text.lines().collect();
        lines[line - 1] = replacement;
        lines.join("\n")
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).unwrap() + 1
    }

    /// GLM's page with `from` replaced by `to` on line `n`.
    fn glm_with(n: usize, from: &str, to: &str) -> String {
        with_line(GLM, n, &GLM.lines().nth(n - 1).unwrap().replace(from, to))
    }

    #[test]
    fn a_table_figure_that_disagrees_with_the_matrix_names_the_matrix_line() {
        let n = line_of(GLM, "| Sustained decode | 8K | 1 | Valid | 175.8");
        let changed = glm_with(n, "175.8", "175.9");
        let e = parse(&changed).unwrap_err();
        assert_eq!(e.line, line_of(GLM, "| 8K | 175.8109 ms TTFT"));
        assert!(e.expected.contains("175.9109 ms TTFT"), "{e}");
    }

    #[test]
    fn a_malformed_number_names_line_column_and_form() {
        let n = line_of(GLM, "| Sustained decode | 8K | 2 |");
        let changed = glm_with(n, "126 ms", "126ms");
        let e = parse(&changed).unwrap_err();
        assert_eq!(e.line, n);
        assert_eq!(e.expected, "a latency like 433 ms in column \"TTFT\"");
        assert_eq!(e.found, "126ms");
        assert!(
            e.to_string()
                .starts_with(&format!("page.txt:{n}: expected"))
        );
    }

    #[test]
    fn unknown_card_fields_and_missing_sections_are_errors() {
        let n = line_of(GLM, "- Backend");
        let e = parse(&with_line(GLM, n, "- Backnd")).unwrap_err();
        assert_eq!(e.line, n);
        assert!(e.expected.starts_with("a Engine field"), "{e}");

        let cut: String = GLM.lines().take(60).collect::<Vec<_>>().join("\n");
        let e = parse(&cut).unwrap_err();
        assert_eq!(e.found, "end of file");
    }

    #[test]
    fn a_vram_total_that_does_not_add_up_is_an_error() {
        let n = line_of(GLM, "564 GB");
        let e = parse(&with_line(GLM, n, "- 560 GB (4 × 141 GB)")).unwrap_err();
        assert_eq!(e.line, n);
        assert!(e.expected.contains("564 GB (4 × 141 GB)"));
    }

    #[test]
    fn a_legend_for_a_status_not_present_is_an_error() {
        let n = GLM.lines().count();
        let last = GLM.lines().last().unwrap();
        let changed = with_line(
            GLM,
            n,
            &format!("{last} {}", Status::Looped.legend().unwrap()),
        );
        let e = parse(&changed).unwrap_err();
        assert_eq!(e.line, n);
    }
}
