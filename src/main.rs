//! `sitegen`: parses the command line (src/cli.rs) and calls the library.

use clap::Parser;

use sitegen::cli::{Cli, Command};

use std::process::ExitCode;

// A build allocates and frees millions of small strings and vectors (a
// series line per run, a row per cell): mimalloc spends less time there
// than glibc's malloc and keeps freed pages for the next allocation
// (benches/build.rs: docs/development.md gives the figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    sitegen::app::without_huge_pages();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// What `check` (and `build --check`) exits with when the data cannot be read.
const UNREADABLE_DATA: u8 = 2;

/// Says a check's report: Markdown on `out` (stdout for `check`, stderr for
/// `build --check`), appended to `--summary` and to `$GITHUB_STEP_SUMMARY`
/// when it is set, written to `--markdown`, and JSON to `--json`. Returns
/// the exit code `--fail-on` asks for.
fn say_report(
    report: &sitegen::app::check::Report,
    args: &sitegen::cli::ReportArgs,
    rule: &sitegen::judge::change::Rule,
    to_stdout: bool,
) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let markdown = report.markdown(args.site_url.as_deref(), rule);
    if to_stdout {
        print!("{markdown}");
    } else {
        eprint!("{markdown}");
    }
    let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from);
    for path in args.summary.iter().cloned().chain(step_summary) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| anyhow::anyhow!("{}: cannot append the summary: {e}", path.display()))?;
        f.write_all(markdown.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot append the summary: {e}", path.display()))?;
    }
    if let Some(path) = &args.markdown {
        sitegen::store::write_atomically(path, markdown.as_bytes())?;
    }
    if let Some(path) = &args.json {
        sitegen::store::write_atomically(path, report.json().as_bytes())?;
    }
    Ok(ExitCode::from(report.exit_code(args.fail_on)))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Build(args) => {
            let given = args.report.given();
            if !args.check && !given.is_empty() {
                anyhow::bail!(
                    "{} {} only with --check",
                    given.join(", "),
                    if given.len() == 1 { "applies" } else { "apply" }
                );
            }
            let rule = args.judge.rule()?;
            let opts = sitegen::app::pipeline::BuildOptions {
                allow_empty: args.allow_empty,
                rule,
                fresh: args.fresh,
            };
            let data = match sitegen::app::pipeline::load_over(&args.data, opts, Some(&args.out)) {
                Ok(data) => data,
                // With --check, the gate's own code: CI tells "cannot read" from "slower".
                Err(e) if args.check => {
                    eprintln!("error: {e:#}");
                    return Ok(ExitCode::from(UNREADABLE_DATA));
                }
                Err(e) => return Err(e),
            };
            let summary = sitegen::app::pipeline::write_site(&data, &args.out)?;
            for warning in &summary.warnings {
                eprintln!("warning: {warning}");
            }
            eprintln!(
                "built {} and {} into {}{}",
                sitegen::model::format::counted(summary.runs, "run page"),
                sitegen::model::format::counted(summary.files, "file"),
                args.out.display(),
                match (summary.runs_unchanged, summary.reused) {
                    (0, 0) => String::new(),
                    (0, files) => format!(
                        " (unchanged since the last build: {} kept)",
                        sitegen::model::format::counted(files, "file"),
                    ),
                    (runs, files) => format!(
                        " (unchanged since the last build: {} read from its copy, {} kept)",
                        sitegen::model::format::counted(runs, "run"),
                        sitegen::model::format::counted(files, "file"),
                    ),
                }
            );
            if args.check {
                let report =
                    sitegen::app::check::check_series(&data.runs, &data.series, &rule, &data.slo);
                return say_report(&report, &args.report, &rule, false);
            }
        }
        Command::Check(args) => {
            let rule = args.judge.rule()?;
            let opts = sitegen::app::pipeline::BuildOptions {
                allow_empty: true,
                rule,
                // Writes no site.
                fresh: true,
            };
            let data = match sitegen::app::pipeline::load(&args.data, opts) {
                Ok(data) => data,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    return Ok(ExitCode::from(UNREADABLE_DATA));
                }
            };
            let report = match &args.run {
                Some(run) => sitegen::app::check::check_run(
                    &data.runs,
                    &data.series,
                    run,
                    &args.baseline,
                    &rule,
                    &data.slo,
                )?,
                None => {
                    sitegen::app::check::check_series(&data.runs, &data.series, &rule, &data.slo)
                }
            };
            return say_report(&report, &args.report, &rule, true);
        }
        Command::Ingest(args) => {
            let cards = args.cards_patch();
            let (format, files) = sitegen::cli::ingest_inputs(args.format.as_deref(), args.inputs)?;
            let gpu_index = args
                .gpu_index
                .as_deref()
                .map(sitegen::cli::parse_gpu_index)
                .transpose()?;
            let opts = sitegen::ingest::ImportOptions {
                gpu_index,
                id: args.id,
                data: args.data,
                force: args.force,
                meta: args.meta,
                cards,
                context_tokens: args.context,
                dry_run: args.dry_run,
            };
            for outcome in sitegen::ingest::import(format, &files, &opts)? {
                if args.dry_run {
                    print!("{}", outcome.summary(true));
                } else {
                    eprintln!(
                        "wrote {} ({}), read as {}",
                        outcome.dir.display(),
                        outcome.format.name(),
                        outcome.layout
                    );
                    for w in &outcome.warnings {
                        eprintln!("warning: {w}");
                    }
                }
            }
        }
        Command::Run(args) => {
            let opts = args.into_options()?;
            tokio::runtime::Runtime::new()?.block_on(sitegen::runner::run(opts))?;
        }
        Command::Serve(args) => sitegen::app::serve::serve(sitegen::app::serve::ServeOptions {
            data: args.data,
            port: args.port,
            base_path: args.base_path,
            allow_empty: args.allow_empty,
        })?,
        Command::Init(args) => {
            let report = sitegen::app::init::init(&sitegen::app::init::InitOptions {
                dir: args.dir.clone(),
                allow_empty: args.allow_empty,
                force: args.force,
            })?;
            for line in report.lines(&args.dir) {
                eprintln!("{line}");
            }
            for warning in &report.warnings {
                eprintln!("warning: {warning}");
            }
            eprintln!("{}", report.next);
        }
        Command::Export(args) => {
            let sitegen::cli::ExportFormat::LlmdReport = args.format;
            let opts = sitegen::app::export::ExportOptions {
                data: args.data,
                out: args.out,
                runs: args.runs,
            };
            for exported in sitegen::app::export::export_llm_d_reports(&opts)? {
                for line in exported.lines() {
                    eprintln!("{line}");
                }
            }
        }
        Command::Schema(args) => {
            for (name, text) in sitegen::store::schema::data_schemas() {
                let path = args.out.join(name);
                sitegen::store::write_atomically(&path, text.as_bytes())?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
