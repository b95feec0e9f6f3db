//! The `csv` format: the measurement table as a run page's `measurements.csv`
//! exports it, one row per cell, with the columns of `table::COLUMNS`.
//! It carries no cards: they come from `--meta` (a run.json will do).

use std::path::Path;

use anyhow::bail;
use serde_json::json;

use super::Imported;
use crate::model::Cell;
use crate::model::table::{self, COLUMNS};

/// The header line of the format.
pub fn header() -> String {
    COLUMNS
        .iter()
        .map(|c| c.csv_name)
        .collect::<Vec<_>>()
        .join(",")
}

pub const IMPORTER: super::Importer = super::Importer {
    name: "csv",
    detect: |s| {
        let first = s.text.lines().next().map(str::trim_end).unwrap_or_default();
        crate::model::table::csv_columns(&first.split(',').collect::<Vec<_>>()).is_some()
    },
    one_run_from_all_files: false,
    read: |inputs, _| parse_csv(&inputs[0].0, &inputs[0].1),
};

/// Reads every row into a cell. An error names the file, the row (as a
/// spreadsheet numbers it, the header being row 1) and the column.
pub fn parse_csv(file: &Path, text: &str) -> anyhow::Result<Imported> {
    let name = file.display();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| anyhow::anyhow!("{name}: row 1: {e}"))?
        .clone();
    let found: Vec<&str> = headers.iter().collect();
    let Some(columns) = table::csv_columns(&found) else {
        let expected: Vec<&str> = COLUMNS.iter().map(|c| c.csv_name).collect();
        bail!(
            "{name}: row 1: expected the header {}, found {}",
            expected.join(","),
            found.join(",")
        );
    };
    let mut cells: Vec<(usize, Cell)> = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let row = i + 2;
        let record = record.map_err(|e| anyhow::anyhow!("{name}: row {row}: {e}"))?;
        let cell = table::read_csv_row(&columns, record.iter()).map_err(|(column, e)| {
            anyhow::anyhow!(
                "{name}: row {row}, column {column}: expected {}, found {:?}",
                e.expected,
                e.found
            )
        })?;
        crate::store::validate_cell(file, &cell).map_err(|e| anyhow::anyhow!("{e} (row {row})"))?;
        if let Some((first, _)) = cells.iter().find(|(_, c)| c.key() == cell.key()) {
            bail!("{name}: rows {first} and {row} are the same cell");
        }
        cells.push((row, cell));
    }
    if cells.is_empty() {
        bail!("{name}: expected at least one row of measurements after the header");
    }
    let file_name = super::file_name(file);
    Ok(Imported {
        meta: json!({ "source": format!("Imported from {file_name} (the measurement table as CSV).") }),
        cells: cells.into_iter().map(|(_, c)| c).collect(),
        paced: Vec::new(),
        notes_markdown: None,
        warnings: Vec::new(),
        layout: "sitegen's measurement table".into(),
        split: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    /// Rows under the header of a file exported before the optional
    /// columns existed, which still reads.
    fn parse(body: &str) -> anyhow::Result<Imported> {
        let header: Vec<&str> = COLUMNS
            .iter()
            .filter(|c| !c.optional)
            .map(|c| c.csv_name)
            .collect();
        parse_csv(Path::new("m.csv"), &format!("{}\n{body}", header.join(",")))
    }

    #[test]
    fn the_current_header_reads_the_longest_pause() {
        let header = header();
        assert!(header.contains(",tbt_ms,max_pause_ms,"), "{header}");
        let got = parse_csv(
            Path::new("m.csv"),
            &format!(
                "{header}\ndecode,8192,4,valid,,1412.4,1.8,117.7,126,8.5,3012,3.9,12,42372,30,,,,,,,,,{}\n",
                // The latency percentiles' columns, empty.
                ",".repeat(15)
            ),
        )
        .unwrap();
        let Cell::Decode(d) = &got.cells[0] else {
            panic!()
        };
        // The interval's half width reads back around the total.
        let ci = d.total_tok_per_s_ci95.as_ref().unwrap();
        assert!((ci.high - 1412.4 * 1.018).abs() < 1e-9, "{ci:?}");
        assert_eq!(d.max_pause_ms, Some(3012.0));
        assert_eq!(d.avg_active_requests, Some(3.9));
    }

    #[test]
    fn rows_become_cells_with_every_figure() {
        let got = parse(
            "prefill,8192,1,valid,,18900.5,,433.25,,,,,,8192\n\
             decode,8192,4,requests_queued,the server reported waiting requests,1412.4,117.7,126,8.5,3.9,12,42372,30,\n\
             decode,65536,128,over_capacity,too big,,,,,,,,,\n",
        )
        .unwrap();
        assert_eq!(got.cells.len(), 3);
        let Cell::Prefill(p) = &got.cells[0] else {
            panic!()
        };
        assert_eq!(p.prompt_tok_per_s, Some(18900.5));
        assert_eq!(p.ttft_ms, Some(433.25));
        assert_eq!(p.prompt_tokens, Some(8192));
        let Cell::Decode(d) = &got.cells[1] else {
            panic!()
        };
        assert_eq!(d.concurrency, 4);
        assert_eq!(d.status, Status::RequestsQueued);
        assert_eq!(
            d.reason.as_ref().map(|r| r.words()).as_deref(),
            Some("the server reported waiting requests")
        );
        assert_eq!(d.total_tok_per_s, Some(1412.4));
        assert_eq!(d.tbt_median_ms, Some(8.5));
        assert_eq!(d.completed_requests, Some(12));
        assert_eq!(d.output_tokens, Some(42_372));
        assert_eq!(d.measured_s, Some(30.0));
        let Cell::Decode(o) = &got.cells[2] else {
            panic!()
        };
        assert_eq!(o.status, Status::OverCapacity);
        assert_eq!(o.total_tok_per_s, None);
        assert!(got.meta["source"].as_str().unwrap().contains("m.csv"));
    }

    #[test]
    fn a_bad_row_names_its_row_and_column() {
        let e = parse("decode,8192,four,valid,,1,1,1,1,1,1,1,30,\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "m.csv: row 2, column concurrency: expected a whole number of requests, found \"four\""
        );
        let e = parse("decode,8192,4,valid,,NaN,1,1,1,1,1,1,30,\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("m.csv: row 2, column total_tok_per_s: expected a number"),
            "{e}"
        );
        let e = parse("decode,8192,4,valid,,,1,1,1,1,1,1,30,\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2") && e.contains("total_tok_per_s"), "{e}");
        let e = parse("decode,8192,4\n").unwrap_err().to_string();
        assert!(e.starts_with("m.csv: row 2:"), "{e}");
        let twice = "decode,8192,4,error,x,,,,,,,,,\ndecode,8192,4,error,y,,,,,,,,,\n";
        assert_eq!(
            parse(twice).unwrap_err().to_string(),
            "m.csv: rows 2 and 3 are the same cell"
        );
        let e = parse_csv(Path::new("m.csv"), "phase,context\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("m.csv: row 1: expected the header phase,context_tokens"),
            "{e}"
        );
        assert!(parse("").is_err(), "a header alone is no run");
    }
}
