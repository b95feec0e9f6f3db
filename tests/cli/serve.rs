//! `sitegen serve`: rebuilds on edits under data/ and keeps the last good site.

use crate::common;

use common::{SitegenServe, wait_until};

#[test]
fn serve_rebuilds_when_the_data_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let page = common::fixture_pages()[1].clone();
    sitegen::ingest::import_pages(&[page], Some("step"), &data, false).unwrap();
    let server = SitegenServe::start(&data, "/");
    let get = |path: &str| {
        common::http_get(&format!("{}{path}", server.base_url))
            .unwrap()
            .text()
            .unwrap()
    };
    assert!(get("runs/step/").contains("<h1>Step-3.5-Flash on H200 SXM 141GB ×4</h1>"));
    let run_json = data.join("step/run.json");
    let text = std::fs::read_to_string(&run_json)
        .unwrap()
        .replace("\"Step-3.5-Flash\"", "\"Step-Renamed\"");
    std::fs::write(&run_json, text).unwrap();
    wait_until("the page to be rebuilt", || {
        get("runs/step/").contains("Step-Renamed on H200")
    });
    // Reading the data, as every rebuild does, is not a change: one edit,
    // one rebuild. (Reacting to reads once made each rebuild trigger the
    // next, forever.) Every file is read here too, to its last byte; the
    // pause only gives such a loop time to show.
    let mut read = Vec::new();
    for entry in walkdir::WalkDir::new(&data) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            read.push((entry.into_path(), bytes));
        }
    }
    let edited = read.iter().find(|(path, _)| *path == run_json);
    assert!(
        edited.is_some_and(|(_, bytes)| String::from_utf8_lossy(bytes).contains("Step-Renamed")),
        "the edited run.json is among the {} files read, as edited",
        read.len()
    );
    assert!(
        read.iter()
            .any(|(path, _)| path.starts_with(data.join("step/cells"))),
        "its cells were read too: {:?}",
        read.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!(server.said("rebuilt in "), 1, "one edit, one rebuild");
    // A broken edit keeps the last good site up. Wait for the server to say
    // it tried, so the check below is not made before the rebuild ran.
    std::fs::write(&run_json, "{ not json").unwrap();
    wait_until("the failed rebuild to be reported", || {
        server.said("rebuild failed, still serving the last good site") > 0
    });
    let page = get("runs/step/");
    assert!(page.contains("Step-Renamed on H200"), "{page}");
}
