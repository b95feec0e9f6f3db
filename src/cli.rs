//! Command-line interface: parses arguments and calls the library. No logic here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "sitegen",
    version,
    about = "Measure LLM inference servers and publish the results as a static site"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render every run under the data folder into a static site.
    Build(BuildArgs),
    /// Import measurements made elsewhere into the data folder.
    #[command(subcommand)]
    Ingest(IngestCommand),
    /// Build the site in memory and serve it on 127.0.0.1, rebuilding when the data changes.
    Serve(ServeArgs),
    /// Write the JSON Schemas of run.json and of cell files.
    Schema(SchemaArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Serve the site under this path, as a static host serving it from a sub-path would.
    #[arg(long, default_value = "/")]
    pub base_path: String,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Folder to write run.schema.json and cell.schema.json into.
    #[arg(long, default_value = "docs/schema")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Folder holding the runs (`<run-id>/run.json`, `<run-id>/cells/*.json`).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Folder the site is written to; replaced as a whole when the build succeeds.
    #[arg(long, default_value = "site")]
    pub out: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum IngestCommand {
    /// Import the text of published "Speed test matrix" pages, one run per file.
    Page(IngestPageArgs),
}

#[derive(Debug, Args)]
pub struct IngestPageArgs {
    /// Page text files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Data folder to write the runs into.
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Run id (with a single file); default: the file name without extension.
    #[arg(long)]
    pub id: Option<String>,
    /// Replace a run that already exists.
    #[arg(long)]
    pub force: bool,
}
