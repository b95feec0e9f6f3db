//! Importers of measurements made elsewhere: one file per foreign format.
//! Each turns its input into a [`crate::model::Run`]; [`crate::store`] writes it.

pub mod page;

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The run id a file becomes by default: its name without extension, lowercased.
pub fn default_run_id(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// Imports published page texts into `data_dir`, one run per file. Every file
/// is parsed before anything is written, so a bad file writes nothing.
pub fn import_pages(
    files: &[PathBuf],
    id: Option<&str>,
    data_dir: &Path,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    if id.is_some() && files.len() != 1 {
        anyhow::bail!("--id names one run: pass exactly one page with it");
    }
    let mut runs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("{}: cannot read the page", file.display()))?;
        let run_id = id.map_or_else(|| default_run_id(file), str::to_string);
        crate::store::check_run_id(&run_id)
            .with_context(|| format!("{}: choose a run id with --id", file.display()))?;
        runs.push(page::parse_page(file, &text, &run_id)?);
    }
    let mut written = Vec::new();
    for run in &runs {
        written.push(crate::store::write_run(data_dir, run, force)?);
    }
    Ok(written)
}
