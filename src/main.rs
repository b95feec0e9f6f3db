//! `sitegen`: parses the command line (src/cli.rs) and calls the library.

use clap::Parser;

use sitegen::cli::{Cli, Command};

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
            let (format, files) = sitegen::cli::ingest_inputs(args.inputs)?;
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
            let opts = args.into_options()?;
            tokio::runtime::Runtime::new()?.block_on(sitegen::runner::run(opts))?;
        }
        Command::Serve(args) => sitegen::serve::serve(sitegen::serve::ServeOptions {
            data: args.data,
            port: args.port,
            base_path: args.base_path,
            allow_empty: args.allow_empty,
        })?,
        Command::Init(args) => {
            let report = sitegen::init::init(&sitegen::init::InitOptions {
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
