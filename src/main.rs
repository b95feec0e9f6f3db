use clap::Parser;
use std::path::PathBuf;

use sitegen::cli::{Cli, Command, RunArgs};
use sitegen::ingest::Format;
use sitegen::runner::{RunOptions, plan};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Build(args) => {
            let opts = sitegen::pipeline::BuildOptions {
                allow_empty: args.allow_empty,
            };
            let summary = sitegen::pipeline::build_site_with(&args.data, &args.out, opts)?;
            for warning in &summary.warnings {
                eprintln!("warning: {warning}");
            }
            eprintln!(
                "built {} and {} into {}",
                sitegen::format::counted(summary.runs, "run page"),
                sitegen::format::counted(summary.files, "file"),
                args.out.display()
            );
        }
        Command::Ingest(args) => {
            let (format, files) = ingest_inputs(args.inputs)?;
            let opts = sitegen::ingest::ImportOptions {
                id: args.id,
                data: args.data,
                force: args.force,
                meta: args.meta,
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
            let opts = run_options(*args)?;
            tokio::runtime::Runtime::new()?.block_on(sitegen::runner::run(opts))?;
        }
        Command::Serve(args) => sitegen::serve::serve(sitegen::serve::ServeOptions {
            data: args.data,
            port: args.port,
            base_path: args.base_path,
            allow_empty: args.allow_empty,
        })?,
        Command::Schema(args) => {
            for (name, text) in sitegen::schema::data_schemas() {
                let path = args.out.join(name);
                sitegen::store::write_atomically(&path, text.as_bytes())?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}

/// Splits `[FORMAT] FILE...`: a first word that is not a file is the format
/// ("auto" recognises each file's format, as leaving it out does).
fn ingest_inputs(mut inputs: Vec<PathBuf>) -> anyhow::Result<(Option<Format>, Vec<PathBuf>)> {
    let Some(first) = inputs.first().filter(|f| !f.exists()).cloned() else {
        return Ok((None, inputs));
    };
    let word = first.to_string_lossy();
    let format = match (word.as_ref(), Format::from_name(&word)) {
        ("auto", _) => None,
        (_, Some(format)) => Some(format),
        (_, None) => anyhow::bail!(
            "{word}: no such file, and not a format ({}, auto)",
            Format::ALL.map(Format::name).join(", ")
        ),
    };
    inputs.remove(0);
    if inputs.is_empty() {
        anyhow::bail!("expected at least one file to import after the format {word}");
    }
    Ok((format, inputs))
}

fn run_options(a: RunArgs) -> anyhow::Result<RunOptions> {
    let contexts = a
        .contexts
        .as_deref()
        .map(plan::parse_contexts)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--contexts: {e}"))?;
    let concurrency = plan::parse_concurrency(&a.concurrency)
        .map_err(|e| anyhow::anyhow!("--concurrency: {e}"))?;
    let window: std::time::Duration = a.duration.into();
    if window.is_zero() {
        anyhow::bail!("--duration: expected a positive duration like 30s");
    }
    let metrics_every: std::time::Duration = a.metrics_interval.into();
    Ok(RunOptions {
        api_key: std::env::var(&a.api_key_env).ok().filter(|k| !k.is_empty()),
        url: a.url,
        model: a.model,
        run_id: a.run_id,
        data: a.data,
        contexts,
        concurrency,
        window,
        max_output: a.max_output,
        kv_capacity: a.kv_capacity,
        max_model_len: a.max_model_len,
        temperature: a.temperature,
        dry_run: a.dry_run,
        force: a.force,
        keep_errors: a.keep_errors,
        endpoint: match a.endpoint {
            sitegen::cli::EndpointArg::Auto => None,
            sitegen::cli::EndpointArg::Completions => {
                Some(sitegen::model::ApiEndpoint::Completions)
            }
            sitegen::cli::EndpointArg::Chat => Some(sitegen::model::ApiEndpoint::Chat),
        },
        request_timeout: a.request_timeout.into(),
        metrics_every: (!metrics_every.is_zero()).then_some(metrics_every),
        meta_file: a.meta,
        meta: a.cards,
    })
}
