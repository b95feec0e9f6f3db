//! `sitegen export`: runs of the data folder written in another tool's
//! format, one folder per run under `--out` (`export/` holds the formats).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::export::llm_d_report;
use crate::model::Run;

/// What `sitegen export` was asked for.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub data: PathBuf,
    pub out: PathBuf,
    /// The runs to export, by id; every run when empty.
    pub runs: Vec<String>,
}

/// One run exported: its folder, the files written, and what was left out.
#[derive(Debug, Clone)]
pub struct Exported {
    pub run: String,
    pub dir: PathBuf,
    /// Each file written, with the point it holds ("decode 8K × 4").
    pub files: Vec<(PathBuf, String)>,
    /// What of the run is in no report, one sentence each.
    pub left_out: Vec<String>,
}

impl Exported {
    /// What the command prints for this run.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "wrote {} into {}",
            crate::model::format::counted(self.files.len(), "llm-d Benchmark Report"),
            self.dir.display()
        )];
        for l in &self.left_out {
            out.push(format!("  left out: {l}"));
        }
        out
    }
}

/// Writes every asked run as llm-d Benchmark Reports v0.2.1, one per load
/// point, into `out/<run-id>/`, which is replaced as a whole (a point no
/// longer in the run leaves no stale report). Nothing is written when a run
/// asked for is not in the data folder.
pub fn export_llm_d_reports(opts: &ExportOptions) -> anyhow::Result<Vec<Exported>> {
    let runs = chosen(crate::store::load_runs(&opts.data)?, &opts.runs, &opts.data)?;
    let mut done = Vec::new();
    for run in &runs {
        let reports = llm_d_report::of_run(run);
        std::fs::create_dir_all(&opts.out)
            .with_context(|| format!("{}: cannot create the folder", opts.out.display()))?;
        let staged = tempfile::Builder::new()
            .prefix(&format!(".tmp-{}-", run.id))
            .tempdir_in(&opts.out)
            .with_context(|| format!("{}: cannot write into the folder", opts.out.display()))?;
        let dir = opts.out.join(&run.id);
        let mut files = Vec::new();
        for r in &reports.reports {
            let path = staged.path().join(&r.file_name);
            crate::store::write_atomically(&path, r.yaml(&run.id).as_bytes())?;
            files.push((dir.join(&r.file_name), r.point.clone()));
        }
        crate::store::atomic::replace_dir(&staged.keep(), &dir)
            .with_context(|| format!("{}: cannot replace the folder", dir.display()))?;
        done.push(Exported {
            run: run.id.clone(),
            dir,
            files,
            left_out: reports.left_out,
        });
    }
    Ok(done)
}

/// The runs asked for, in the order asked; every run when none is named.
fn chosen(runs: Vec<Run>, ids: &[String], data: &Path) -> anyhow::Result<Vec<Run>> {
    if ids.is_empty() {
        if runs.is_empty() {
            anyhow::bail!("{}: no run to export", data.display());
        }
        return Ok(runs);
    }
    let mut out = Vec::new();
    for id in ids {
        match runs.iter().find(|r| &r.id == id) {
            Some(r) => out.push(r.clone()),
            None => anyhow::bail!(
                "{id}: no such run in {} (it has: {})",
                data.display(),
                runs.iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(out)
}
