//! `sitegen serve`: a local preview, like `zola serve` or `mdbook serve`.
//!
//! The site is rendered in memory and served on 127.0.0.1 under a base path,
//! as a static host would serve it from a sub-path. When anything under the
//! data folder changes the site is rebuilt; a rebuild that fails is reported
//! and the last good site stays up.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{Context, bail};
use notify::Watcher;

use crate::app::pipeline;
use crate::app::rebuild::Rebuilder;
use crate::app::site::Site;

pub struct ServeOptions {
    pub data: PathBuf,
    /// The port asked for; `None` is [`DEFAULT_PORT`], or any free port when
    /// that one is taken (as `hugo server` does).
    pub port: Option<u16>,
    pub base_path: String,
    /// Serve an empty site when the data folder has no run.
    pub allow_empty: bool,
}

/// The port `sitegen serve` listens on when none is asked for.
pub const DEFAULT_PORT: u16 = 8000;

/// A server on 127.0.0.1 at the port asked for, or at the default one and,
/// when that is taken, at any free one. A port asked for and taken is an
/// error that names the way out.
fn listen(port: Option<u16>) -> anyhow::Result<tiny_http::Server> {
    let at = |p: u16| tiny_http::Server::http(("127.0.0.1", p));
    match port {
        Some(p) => at(p).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on 127.0.0.1:{p}: {e}; another program may be using that port: pass another --port, or --port 0 for any free one"
            )
        }),
        None => at(DEFAULT_PORT).or_else(|first| {
            eprintln!(
                "port {DEFAULT_PORT} is not free ({first}); serving on a free port instead"
            );
            at(0).map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1 at any port: {e}"))
        }),
    }
}

/// What a request path resolves to.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolved<'a> {
    File {
        bytes: &'a [u8],
        content_type: &'static str,
    },
    Redirect(String),
    NotFound,
}

/// "/some/prefix" or "some/prefix/" -> "/some/prefix/"; "" -> "/".
pub(crate) fn normalize_base_path(base: &str) -> anyhow::Result<String> {
    let trimmed = base.trim_matches('/');
    if trimmed.split('/').any(|s| s == ".." || s == ".") {
        bail!("--base-path {base:?}: '.' and '..' are not allowed");
    }
    Ok(if trimmed.is_empty() {
        "/".to_string()
    } else {
        format!("/{trimmed}/")
    })
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("csv") => "text/csv; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// Maps a request URL onto a file of the site served under `base` ("/x/").
pub fn resolve<'a>(site: &'a Site, base: &str, url: &str) -> Resolved<'a> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let Ok(path) = percent_encoding::percent_decode_str(path).decode_utf8() else {
        return Resolved::NotFound;
    };
    if format!("{path}/") == base {
        return Resolved::Redirect(base.to_string());
    }
    let Some(rel) = path.strip_prefix(base) else {
        return Resolved::NotFound;
    };
    if rel.split('/').any(|s| s == ".." || s == ".") {
        return Resolved::NotFound;
    }
    let file = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    match site.files.get(&file) {
        Some(bytes) => Resolved::File {
            bytes,
            content_type: content_type(&file),
        },
        None if site.files.contains_key(&format!("{file}/index.html")) => {
            Resolved::Redirect(format!("{path}/"))
        }
        None => Resolved::NotFound,
    }
}

pub fn serve(opts: ServeOptions) -> anyhow::Result<()> {
    let base = normalize_base_path(&opts.base_path)?;
    let build = pipeline::BuildOptions {
        allow_empty: opts.allow_empty,
        ..Default::default()
    };
    let (rebuilder, summary) = Rebuilder::new(&opts.data, build)?;
    let site = Arc::new(RwLock::new(rebuilder));
    let server = listen(opts.port)?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .context("the server has no IP address")?;
    // The first line on stdout is the address: scripts and tests read it.
    println!("serving http://127.0.0.1:{port}{base}");
    eprintln!(
        "{}; watching {} for changes (Ctrl-C stops)",
        crate::model::format::counted(summary.runs, "run"),
        opts.data.display()
    );

    let _watcher = watch(&opts.data, Arc::clone(&site), build)?;
    for request in server.incoming_requests() {
        let guard = site.read().unwrap_or_else(|e| e.into_inner());
        let response = match resolve(guard.site(), &base, request.url()) {
            Resolved::File {
                bytes,
                content_type,
            } => tiny_http::Response::from_data(bytes.to_vec())
                .with_header(header("Content-Type", content_type))
                .with_header(header("Cache-Control", "no-cache")),
            Resolved::Redirect(to) => tiny_http::Response::from_data(Vec::new())
                .with_status_code(302)
                .with_header(header("Location", &to)),
            Resolved::NotFound => tiny_http::Response::from_data(b"not found\n".to_vec())
                .with_status_code(404)
                .with_header(header("Content-Type", "text/plain; charset=utf-8")),
        };
        drop(guard);
        // A client that hung up is not the server's problem.
        let _ = request.respond(response);
    }
    Ok(())
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

/// Whether a file event can change what a build reads. Reading a file is an
/// event too (inotify reports opens and closes), and a rebuild reads every
/// file: reacting to those made each rebuild trigger the next, forever.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::EventKind::{Access, Any, Modify, Other};
    use notify::event::ModifyKind;
    !matches!(
        kind,
        Access(_) | Modify(ModifyKind::Metadata(_)) | Any | Other
    )
}

/// Rebuilds `site` whenever something under `data` changes: the parts a
/// change to runs touches (src/app/rebuild.rs), or the whole site for a
/// change to the folder's own files. Events are gathered for a moment
/// first, so one save does not cause several builds.
fn watch(
    data: &Path,
    site: Arc<RwLock<Rebuilder>>,
    build: pipeline::BuildOptions,
) -> anyhow::Result<notify::RecommendedWatcher> {
    let (tx, rx) = mpsc::channel::<Vec<PathBuf>>();
    let mut watcher =
        notify::recommended_watcher(
            move |event: notify::Result<notify::Event>| match watch_report(event) {
                Some(WatchReport::Changed(paths)) => {
                    let _ = tx.send(paths);
                }
                Some(WatchReport::Failed(message)) => eprintln!("{message}"),
                None => {}
            },
        )
        .context("cannot watch the data folder")?;
    watcher
        .watch(data, notify::RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", data.display()))?;
    let data = data.to_path_buf();
    std::thread::spawn(move || {
        while let Ok(mut paths) = rx.recv() {
            while let Ok(more) = rx.recv_timeout(Duration::from_millis(200)) {
                paths.extend(more);
            }
            paths.sort();
            paths.dedup();
            let started = std::time::Instant::now();
            let full = site
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .needs_full_build(&paths);
            // A whole build is made beside the site served, which stays up
            // meanwhile; an update of some runs holds it for a moment.
            let result = if full {
                Rebuilder::new(&data, build).map(|(fresh, summary)| {
                    *site.write().unwrap_or_else(|e| e.into_inner()) = fresh;
                    (summary.runs, summary.files, summary.files)
                })
            } else {
                site.write()
                    .unwrap_or_else(|e| e.into_inner())
                    .update(&paths)
                    .map(|u| (u.summary.runs, u.rendered, u.summary.files))
            };
            match result {
                Ok((runs, rendered, files)) => eprintln!(
                    "rebuilt in {:.2} s: {}, {rendered} of {files} files rendered",
                    started.elapsed().as_secs_f64(),
                    crate::model::format::counted(runs, "run")
                ),
                Err(e) => eprintln!("rebuild failed, still serving the last good site: {e:#}"),
            }
        }
    });
    Ok(watcher)
}

/// What one event of the file watcher means for the server.
#[derive(Debug, PartialEq)]
enum WatchReport {
    /// These paths under the data folder changed: rebuild.
    Changed(Vec<PathBuf>),
    /// The watcher failed (too many files, a folder removed...): said out
    /// loud, since edits may no longer be seen; the last good site stays.
    Failed(String),
}

fn watch_report(event: notify::Result<notify::Event>) -> Option<WatchReport> {
    match event {
        Ok(e) => changes_content(&e.kind).then_some(WatchReport::Changed(e.paths)),
        Err(e) => Some(WatchReport::Failed(format!(
            "watching the data folder failed ({e}): still serving the last good site, but edits may not be seen until sitegen serve is restarted"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watcher_error_is_reported_not_dropped() {
        let report = watch_report(Err(notify::Error::generic("inotify watch limit reached")));
        assert_eq!(
            report,
            Some(WatchReport::Failed(
                "watching the data folder failed (inotify watch limit reached): still serving the last good site, but edits may not be seen until sitegen serve is restarted".into()
            ))
        );
        let write = notify::Event::new(notify::EventKind::Modify(notify::event::ModifyKind::Data(
            notify::event::DataChange::Content,
        )));
        let write = write.add_path(PathBuf::from("data/run-a/run.json"));
        assert_eq!(
            watch_report(Ok(write)),
            Some(WatchReport::Changed(vec![PathBuf::from(
                "data/run-a/run.json"
            )]))
        );
    }

    #[test]
    fn reading_the_data_is_not_a_change_but_writing_it_is() {
        use notify::EventKind;
        use notify::event::{
            AccessKind, AccessMode, CreateKind, DataChange, MetadataKind, ModifyKind, RemoveKind,
            RenameMode,
        };
        for read in [
            EventKind::Access(AccessKind::Open(AccessMode::Read)),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)),
        ] {
            assert!(!changes_content(&read), "{read:?}");
        }
        for write in [
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Create(CreateKind::File),
            EventKind::Remove(RemoveKind::File),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
        ] {
            assert!(changes_content(&write), "{write:?}");
        }
    }

    fn site() -> Site {
        let mut s = Site::default();
        s.files.insert("index.html".into(), b"home".to_vec());
        s.files
            .insert("runs/a/index.html".into(), b"run a".to_vec());
        s.files.insert("static/style.css".into(), b"css".to_vec());
        s
    }

    #[test]
    fn base_paths_are_normalised() {
        assert_eq!(normalize_base_path("").unwrap(), "/");
        assert_eq!(normalize_base_path("/").unwrap(), "/");
        assert_eq!(normalize_base_path("some/prefix").unwrap(), "/some/prefix/");
        assert_eq!(
            normalize_base_path("/some/prefix/").unwrap(),
            "/some/prefix/"
        );
        assert!(normalize_base_path("/a/../b").is_err());
    }

    #[test]
    fn requests_resolve_under_the_base_path_only() {
        let s = site();
        let b = "/p/";
        assert!(matches!(
            resolve(&s, b, "/p/"),
            Resolved::File { bytes: b"home", .. }
        ));
        assert!(matches!(
            resolve(&s, b, "/p/index.html?x=1"),
            Resolved::File { bytes: b"home", .. }
        ));
        assert!(matches!(
            resolve(&s, b, "/p/runs/a/"),
            Resolved::File {
                bytes: b"run a",
                ..
            }
        ));
        assert_eq!(
            resolve(&s, b, "/p/runs/a"),
            Resolved::Redirect("/p/runs/a/".into())
        );
        assert_eq!(resolve(&s, b, "/p"), Resolved::Redirect("/p/".into()));
        assert_eq!(resolve(&s, b, "/index.html"), Resolved::NotFound);
        assert_eq!(resolve(&s, b, "/p/../p/index.html"), Resolved::NotFound);
        assert_eq!(resolve(&s, b, "/p/nope.html"), Resolved::NotFound);
        match resolve(&s, b, "/p/static/style.css") {
            Resolved::File { content_type, .. } => {
                assert_eq!(content_type, "text/css; charset=utf-8")
            }
            other => panic!("{other:?}"),
        }
    }
}
