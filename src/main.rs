use clap::Parser;
use sitegen::cli::{Cli, Command, IngestCommand};

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
            let summary = sitegen::pipeline::build_site(&args.data, &args.out)?;
            eprintln!(
                "built {} run pages and {} files into {}",
                summary.runs,
                summary.files,
                args.out.display()
            );
        }
        Command::Ingest(IngestCommand::Page(args)) => {
            let written = sitegen::ingest::import_pages(
                &args.files,
                args.id.as_deref(),
                &args.data,
                args.force,
            )?;
            for dir in written {
                eprintln!("wrote {}", dir.display());
            }
        }
        Command::Serve(args) => sitegen::serve::serve(sitegen::serve::ServeOptions {
            data: args.data,
            port: args.port,
            base_path: args.base_path,
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
