//! The built run pages carry everything the reference pages carry, figure for
//! figure. The HTML is read with an HTML parser; the references are read
//! naively from their text, independently of sitegen's page ingester.

use crate::common;

use std::path::Path;

use common::{ReferencePage, build_bundled_site, files_under, fixture_pages};
use scraper::{ElementRef, Html, Selector};

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(el: ElementRef) -> String {
    el.text().collect::<String>().trim().to_string()
}

fn page_for(site: &Path, reference: &Path) -> Html {
    let id = sitegen::ingest::default_run_id(reference);
    let path = site.join("runs").join(&id).join("index.html");
    Html::parse_document(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
}

#[test]
fn every_measurement_row_matches_the_reference_figure_for_figure() {
    let (_tmp, site) = build_bundled_site();
    let mut counts = Vec::new();
    for reference_path in fixture_pages() {
        let reference = ReferencePage::load(&reference_path);
        let page = page_for(&site, &reference_path);
        let header: Vec<String> = page
            .select(&sel("#measurements thead th"))
            .map(text)
            .collect();
        assert_eq!(
            header,
            [
                "Phase",
                "Context",
                "Requests at once",
                "Status",
                "Total tok/s",
                "Per request tok/s",
                "TTFT",
                "Time between tokens",
                "Average active requests",
                "Completed requests",
                "Output tokens",
                "Measured for"
            ]
        );
        let rows: Vec<Vec<String>> = page
            .select(&sel("#measurements tbody tr"))
            .map(|tr| tr.select(&sel("td")).map(text).collect())
            .collect();
        let expected = reference.measurement_rows();
        assert_eq!(rows.len(), expected.len(), "{}", reference_path.display());
        for (got, want) in rows.iter().zip(&expected) {
            assert_eq!(got, want, "{}", reference_path.display());
        }
        counts.push(rows.len());
    }
    assert_eq!(counts, [73, 55], "GLM has 73 rows and Step 55");
}

#[test]
fn every_matrix_cell_carries_the_reference_figures_and_status() {
    let (_tmp, site) = build_bundled_site();
    for reference_path in fixture_pages() {
        let reference = ReferencePage::load(&reference_path);
        let page = page_for(&site, &reference_path);
        let levels: Vec<String> = page
            .select(&sel("#decode table.matrix thead th"))
            .map(text)
            .collect();
        let expected = reference.matrix_rows();
        let rows: Vec<Vec<String>> = page
            .select(&sel("#decode table.matrix tbody tr"))
            .map(|tr| tr.select(&sel("th, td")).map(text).collect())
            .collect();
        let header_line = reference
            .lines
            .iter()
            .find(|l| l.contains("| Context |"))
            .unwrap();
        let want_levels: Vec<&str> = header_line
            .split("| ")
            .skip(1)
            .map(|c| c.trim_end_matches(" |").trim())
            .collect();
        assert_eq!(levels, want_levels);
        assert_eq!(rows, expected, "{}", reference_path.display());

        // Statuses are marked by class as well as in words.
        for td in page.select(&sel("#decode td.m")) {
            let t = text(td);
            let class = td.value().attr("class").unwrap();
            for (words, marker) in [
                ("Requests queued", "requests-queued"),
                ("Over capacity", "over-capacity"),
                ("Looped", "looped"),
            ] {
                assert_eq!(t.contains(words), class.contains(marker), "{t} / {class}");
            }
        }
    }
}

#[test]
fn cards_title_subtitle_and_launch_command_match_the_reference() {
    let (_tmp, site) = build_bundled_site();
    for reference_path in fixture_pages() {
        let reference = ReferencePage::load(&reference_path);
        let page = page_for(&site, &reference_path);
        let h1 = page.select(&sel("h1")).map(text).next().unwrap();
        assert_eq!(h1, reference.lines[1]);

        // The reference text runs the quantization into the summary ("FP88 contexts").
        let subtitle = page.select(&sel(".subtitle")).map(text).next().unwrap();
        let at = subtitle.find(" contexts (").unwrap();
        let digits = subtitle[..at].len()
            - subtitle[..at]
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .len();
        let joined = format!(
            "{}{}",
            subtitle[..at - digits].strip_suffix(" · ").unwrap(),
            &subtitle[at - digits..]
        );
        assert_eq!(joined, reference.lines[2]);

        let fields: Vec<(String, String)> = page
            .select(&sel("section.card dl div"))
            .map(|d| {
                (
                    d.select(&sel("dt")).map(text).next().unwrap(),
                    d.select(&sel("dd")).map(text).next().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            fields,
            reference.card_fields(),
            "{}",
            reference_path.display()
        );
        let cards: Vec<String> = page.select(&sel("section.card h2")).map(text).collect();
        assert_eq!(cards, ["Hardware", "Engine", "Run"]);

        let command = page
            .select(&sel("#launch-command code"))
            .map(text)
            .next()
            .unwrap();
        assert_eq!(command, reference.launch_command());
        assert!(
            page.select(&sel("#launch-command button.copy"))
                .next()
                .is_some()
        );
    }
}

#[test]
fn prefill_chart_labels_every_bar_with_throughput_and_ttft() {
    let (_tmp, site) = build_bundled_site();
    for reference_path in fixture_pages() {
        let reference = ReferencePage::load(&reference_path);
        let page = page_for(&site, &reference_path);
        let svg_texts: Vec<String> = page.select(&sel("#prefill svg text")).map(text).collect();
        let rows: Vec<Vec<String>> = reference
            .measurement_rows()
            .into_iter()
            .filter(|r| r[0] == "Prefill")
            .collect();
        let labels = reference.prefill_labels();
        assert_eq!(labels.len(), rows.len());
        for (label, row) in labels.iter().zip(&rows) {
            let (context, ttft) = (&row[1], format!("{} TTFT", row[6]));
            assert!(svg_texts.contains(context), "no x label {context}");
            assert!(svg_texts.contains(&ttft), "no bar label {ttft}");
            let value = label
                .strip_prefix(&format!("{context} context"))
                .and_then(|l| l.strip_suffix(&ttft))
                .unwrap();
            assert!(
                svg_texts.iter().any(|t| t == value),
                "no bar label {value} for {context}"
            );
        }
        let title = page.select(&sel("#prefill svg title")).map(text).next();
        assert_eq!(
            title.as_deref(),
            Some("Prefill: prompt tok/s by context length")
        );
    }
}

#[test]
fn legends_and_notes_are_those_of_the_reference() {
    let (_tmp, site) = build_bundled_site();
    for reference_path in fixture_pages() {
        let reference = ReferencePage::load(&reference_path);
        let page = page_for(&site, &reference_path);
        let last = reference.lines.last().unwrap();
        // Under the matrix, a swatch per status with its sentence; under the
        // table, the sentences as the reference writes them.
        let keyed: Vec<String> = page.select(&sel("ul.status-key li")).map(text).collect();
        assert_eq!(&keyed.join(" "), last);
        assert_eq!(
            page.select(&sel("ul.status-key li .cell-swatch")).count(),
            keyed.len()
        );
        let legends: Vec<String> = page.select(&sel("p.legend")).map(text).collect();
        assert_eq!(legends, std::slice::from_ref(last));
        let notes: Vec<String> = page.select(&sel("p.note, p.caption")).map(text).collect();
        for line in [
            "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill.",
            "Latencies are medians. Total tok/s is output across all simultaneous requests.",
            "total tok/s · rows are context length, columns are simultaneous requests",
        ] {
            assert!(notes.iter().any(|n| n == line), "missing {line}");
            assert!(
                reference.lines.iter().any(|l| l.starts_with(line)),
                "not in the reference: {line}"
            );
        }
    }
}

#[test]
fn every_section_has_an_id_and_links_are_relative() {
    let (_tmp, site) = build_bundled_site();
    for (rel, bytes) in files_under(&site) {
        if !rel.ends_with(".html") {
            continue;
        }
        let page = Html::parse_document(std::str::from_utf8(&bytes).unwrap());
        for section in page.select(&sel("section")) {
            assert!(
                section.value().attr("id").is_some(),
                "{rel}: a section without id"
            );
        }
        for el in page.select(&sel("[href], [src]")) {
            let url = el.value().attr("href").or(el.value().attr("src")).unwrap();
            assert!(
                !url.contains("://") && !url.starts_with('/'),
                "{rel}: absolute URL {url}"
            );
        }
    }
}

#[test]
fn the_index_lists_every_run_with_key_figures_and_working_links() {
    let (_tmp, site) = build_bundled_site();
    let index = Html::parse_document(&std::fs::read_to_string(site.join("index.html")).unwrap());
    let rows: Vec<Vec<String>> = index
        .select(&sel("table.runs tbody tr"))
        .map(|tr| tr.select(&sel("td")).map(text).collect())
        .collect();
    assert_eq!(
        rows,
        [
            // The figures first, beside the model (a phone shows them),
            // then what each run ran on.
            [
                "GLM-5.3-Flash",
                "2,270.4 (8K × 32)",
                "175.8 (8K)",
                "567.6",
                "18.9K",
                "1024K",
                // Within the first tier (20 tok/s per user, median TTFT ≤
                // 2 s) at 8K: GLM's 8K × 32 waits 11.5 s for a first token.
                "16 (8K)",
                "H200 ×4",
                "vllm · FP8"
            ],
            [
                "Step-3.5-Flash",
                "4,673.1 (8K × 128)",
                "156.7 (8K)",
                "1,168.3",
                "34.2K",
                "256K",
                "128 (8K)",
                "H200 ×4",
                "vllm · 0.29.0 · BF16"
            ],
        ]
    );
    for a in index.select(&sel("table.runs a")) {
        let href = a.value().attr("href").unwrap();
        assert!(site.join(href).is_file(), "{href} does not resolve");
    }
}

#[test]
fn two_builds_give_identical_bytes() {
    let (_a, first) = build_bundled_site();
    let (_b, second) = build_bundled_site();
    assert_eq!(files_under(&first), files_under(&second));
}

#[test]
fn page_text_is_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    sitegen::ingest::import_pages(&[fixture_pages()[0].clone()], Some("evil"), &data, false)
        .unwrap();
    let run_json = data.join("evil/run.json");
    let text = std::fs::read_to_string(&run_json)
        .unwrap()
        .replace("\"GLM-5.3-Flash\"", "\"<script>alert(1)</script>\"");
    std::fs::write(&run_json, text).unwrap();
    std::fs::write(
        data.join("evil/notes.md"),
        "<img src=x onerror=alert(1)> **ok**",
    )
    .unwrap();
    let out = tmp.path().join("site");
    sitegen::app::pipeline::build_site(&data, &out).unwrap();
    for file in ["index.html", "runs/evil/index.html"] {
        let html = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(!html.contains("<script>alert"), "{file}");
        assert!(!html.contains("<img src=x"), "{file}");
    }
    let page = std::fs::read_to_string(out.join("runs/evil/index.html")).unwrap();
    assert!(page.contains("<strong>ok</strong>"));
}

#[test]
fn the_per_gpu_toggle_swaps_to_figures_rust_wrote() {
    let (_tmp, site) = build_bundled_site();
    for reference_path in fixture_pages() {
        let page = page_for(&site, &reference_path);
        let button = page
            .select(&sel("button[data-per-gpu-toggle]"))
            .next()
            .expect("a per-GPU toggle on a run of 4 GPUs");
        assert_eq!(
            button.value().attr("data-showing"),
            Some("Showing tok/s per GPU (÷ 4); show totals")
        );
        // In the table each total carries its raw value (data-sort): the
        // per-GPU text is that over 4, in the table's own format.
        let mut checked = 0;
        for td in page.select(&sel("#measurements td[data-per-gpu]")) {
            let raw: f64 = td.value().attr("data-sort").unwrap().parse().unwrap();
            assert_eq!(
                td.value().attr("data-per-gpu").unwrap(),
                sitegen::model::format::tok_per_s(raw / 4.0),
                "{}",
                text(td)
            );
            checked += 1;
        }
        // The matrix carries the same texts as the table, cell for cell.
        let matrix = page.select(&sel("#decode .tps[data-per-gpu]")).count();
        assert!(
            checked > 30 && matrix > 20,
            "{checked} table, {matrix} matrix figures"
        );
    }
}
