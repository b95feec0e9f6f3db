//! The site built from the bundled data/, byte for byte: every file's
//! SHA-256 against tests/site-digest.txt. A refactoring must leave it
//! unchanged; a change meant to alter pages updates the list on purpose with
//! `SITEGEN_UPDATE_DIGEST=1 cargo test --test site_digest`, and the diff of
//! the list shows which files it touched.

use crate::common;

use sha2::{Digest, Sha256};

fn digest_list(site: &std::path::Path) -> String {
    common::files_under(site)
        .into_iter()
        .map(|(rel, bytes)| format!("{:x}  {rel}\n", Sha256::digest(&bytes)))
        .collect()
}

#[test]
fn the_built_site_is_byte_identical_to_the_recorded_one() {
    let (_tmp, site) = common::build_bundled_site();
    let built = digest_list(&site);
    let path = common::repo().join("tests/site-digest.txt");
    if std::env::var_os("SITEGEN_UPDATE_DIGEST").is_some() {
        assert!(
            std::env::var_os("CI").is_none(),
            "SITEGEN_UPDATE_DIGEST is for a developer, not CI"
        );
        std::fs::write(&path, &built).unwrap();
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    let changed: Vec<&str> = built
        .lines()
        .filter(|l| !recorded.lines().any(|r| r == *l))
        .chain(recorded.lines().filter(|r| !built.lines().any(|l| l == *r)))
        .collect();
    assert!(
        changed.is_empty(),
        "the built site differs from tests/site-digest.txt in:\n{}\n(if the change is meant, run SITEGEN_UPDATE_DIGEST=1 cargo test --test site_digest)",
        changed.join("\n")
    );
}
