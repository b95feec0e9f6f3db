//! The site built from the bundled data/, byte for byte: every file's
//! SHA-256 against tests/site-digest.txt. A refactoring must leave it
//! unchanged; a change meant to alter pages updates the list on purpose with
//! `SITEGEN_UPDATE_DIGEST=1 cargo test --test site digest`, and the diff of
//! the list shows which files it touched.
//!
//! A failure says what changed: the files added, removed and changed, and
//! for a changed text file its first differing lines. The recorded bytes
//! are known where this machine built them before: every run keeps each
//! file it built under its digest in `target/tmp/site-digest/`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// How many differing lines of a changed file a failure shows.
const LINES_SHOWN: usize = 3;

/// How much of a differing line a failure shows, in characters.
const LINE_SHOWN: usize = 160;

/// Where the bytes of every file a run built are kept, by digest.
fn kept() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("site-digest")
}

/// The digest list's lines of the built files: "sha256  path", sorted.
fn digest_list(files: &[(String, Vec<u8>)]) -> String {
    files
        .iter()
        .map(|(rel, bytes)| format!("{:x}  {rel}\n", Sha256::digest(bytes)))
        .collect()
}

/// A digest list read back: path to digest.
fn digests(list: &str) -> BTreeMap<&str, &str> {
    list.lines()
        .map(|l| {
            let (digest, rel) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("not a digest line: {l:?}"));
            (rel, digest)
        })
        .collect()
}

/// One line of a file, cut to `LINE_SHOWN` characters around column `at`.
fn excerpt(line: &str, at: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    let start = at.saturating_sub(LINE_SHOWN / 4);
    let end = (start + LINE_SHOWN).min(chars.len());
    let text: String = chars[start.min(end)..end].iter().collect();
    format!(
        "{}{text}{}",
        if start > 0 { "…" } else { "" },
        if end < chars.len() { "…" } else { "" }
    )
}

/// The first lines at which `recorded` and `built` differ, as a diff would
/// show them (`-` recorded, `+` built), or why they cannot be shown.
fn first_differing_lines(recorded: &[u8], built: &[u8]) -> String {
    let (Ok(recorded), Ok(built)) = (std::str::from_utf8(recorded), std::str::from_utf8(built))
    else {
        return "    (not text)\n".to_string();
    };
    let (old, new): (Vec<&str>, Vec<&str>) = (recorded.lines().collect(), built.lines().collect());
    let Some(first) = (0..old.len().max(new.len())).find(|&i| old.get(i) != new.get(i)) else {
        return "    (the same lines; line endings differ)\n".to_string();
    };
    let mut shown = String::new();
    for i in first..(first + LINES_SHOWN).min(old.len().max(new.len())) {
        let (o, n) = (old.get(i).copied(), new.get(i).copied());
        if o == n {
            continue;
        }
        // The first character at which the two lines differ.
        let at = match (o, n) {
            (Some(o), Some(n)) => o.chars().zip(n.chars()).take_while(|(a, b)| a == b).count(),
            _ => 0,
        };
        for (sign, line) in [('-', o), ('+', n)] {
            match line {
                Some(line) => {
                    shown += &format!("    {sign} line {}: {}\n", i + 1, excerpt(line, at))
                }
                None => shown += &format!("    {sign} line {}: (no such line)\n", i + 1),
            }
        }
    }
    shown
}

/// What differs between the recorded list and the built files, file by file:
/// empty when nothing does.
fn what_changed(recorded: &str, built: &[(String, Vec<u8>)], built_list: &str) -> String {
    let (was, now) = (digests(recorded), digests(built_list));
    let bytes: BTreeMap<&str, &[u8]> = built.iter().map(|(r, b)| (r.as_str(), &b[..])).collect();
    let mut report = String::new();
    for (rel, digest) in &now {
        match was.get(rel) {
            None => report += &format!("added: {rel} ({} bytes)\n", bytes[rel].len()),
            Some(old) if old != digest => {
                report += &format!(
                    "changed: {rel} ({old} to {digest}, now {} bytes)\n",
                    bytes[rel].len()
                );
                match std::fs::read(kept().join(old)) {
                    Ok(old_bytes) => report += &first_differing_lines(&old_bytes, bytes[rel]),
                    Err(_) => {
                        report += &format!(
                            "    (the recorded bytes were never built on this machine; the new ones are in {})\n",
                            kept().join(digest).display()
                        )
                    }
                }
            }
            Some(_) => {}
        }
    }
    for rel in was.keys().filter(|rel| !now.contains_key(*rel)) {
        report += &format!("removed: {rel}\n");
    }
    report
}

#[test]
fn the_built_site_is_byte_identical_to_the_recorded_one() {
    let (_tmp, site) = common::build_bundled_site();
    let files = common::files_under(&site);
    let built = digest_list(&files);
    // Each file kept under its digest, so that a later change can show what
    // it changed in it.
    std::fs::create_dir_all(kept()).unwrap();
    for ((_, bytes), line) in files.iter().zip(built.lines()) {
        let digest = &line[..64];
        std::fs::write(kept().join(digest), bytes).unwrap();
    }
    let path = common::repo().join("tests/site-digest.txt");
    if std::env::var_os("SITEGEN_UPDATE_DIGEST").is_some() {
        assert!(
            std::env::var_os("CI").is_none(),
            "SITEGEN_UPDATE_DIGEST is for a developer, not CI"
        );
        std::fs::write(&path, &built).unwrap();
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    let changed = what_changed(&recorded, &files, &built);
    assert!(
        changed.is_empty(),
        "the built site differs from tests/site-digest.txt:\n{changed}(if the change is meant, run SITEGEN_UPDATE_DIGEST=1 cargo test --test site digest)"
    );
}

/// The report of a change names each file added, removed and changed, with
/// the first differing lines of a changed one whose recorded bytes are kept.
#[test]
fn a_difference_is_reported_file_by_file_with_its_first_differing_lines() {
    let old = b"<html>\n<h1>GLM</h1>\n<p>420 tok/s</p>\n</html>\n".to_vec();
    let new = b"<html>\n<h1>GLM</h1>\n<p>421 tok/s</p>\n</html>\n".to_vec();
    let recorded = digest_list(&[
        ("gone.css".to_string(), b"a".to_vec()),
        ("index.html".to_string(), old.clone()),
        ("same.js".to_string(), b"b".to_vec()),
    ]);
    let built = vec![
        ("index.html".to_string(), new),
        ("new.svg".to_string(), b"<svg/>".to_vec()),
        ("same.js".to_string(), b"b".to_vec()),
    ];
    let built_list = digest_list(&built);
    std::fs::create_dir_all(kept()).unwrap();
    let old_digest = format!("{:x}", Sha256::digest(&old));
    std::fs::write(kept().join(&old_digest), &old).unwrap();
    let report = what_changed(&recorded, &built, &built_list);
    assert!(report.contains("\nadded: new.svg (6 bytes)\n"), "{report}");
    assert!(report.ends_with("removed: gone.css\n"), "{report}");
    assert!(report.starts_with("changed: index.html ("), "{report}");
    assert!(
        report.contains("    - line 3: <p>420 tok/s</p>\n    + line 3: <p>421 tok/s</p>\n"),
        "{report}"
    );
    assert!(!report.contains("same.js"), "{report}");
    assert!(
        !report.contains("line 2"),
        "only the lines that differ: {report}"
    );
    assert_eq!(what_changed(&built_list, &built, &built_list), "");
}
