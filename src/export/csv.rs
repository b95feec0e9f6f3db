//! CSV downloads: a run's full measurement table, and a comparison's cells,
//! with raw numbers (no thousands separators, no units in the cells).

use crate::compare;
use crate::compare::plan::Comparison;
use crate::model::Run;
use crate::model::figure::Figure;
use crate::model::table;

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

fn finish(w: csv::Writer<Vec<u8>>) -> String {
    String::from_utf8(w.into_inner().expect("writing to memory cannot fail"))
        .expect("CSV of UTF-8 fields")
}

/// One row per cell, in the order of the page's table, with the columns of
/// [`table::COLUMNS`].
/// With a price for the run's GPU, a column gives each valid decode cell's
/// cost per million output tokens, and with a kWh price one its electricity
/// (derived, last: importing ignores them).
pub(crate) fn measurements_csv(
    run: &Run,
    price: Option<&crate::model::GpuPrice>,
    electricity: Option<&crate::model::ElectricityPrice>,
) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = table::COLUMNS.iter().map(|c| c.csv_name).collect();
    if price.is_some() {
        header.push(table::COST_CSV_NAME);
    }
    if electricity.is_some() {
        header.push(table::ELECTRICITY_CSV_NAME);
    }
    w.write_record(header)
        .expect("writing to memory cannot fail");
    for cell in &run.cells {
        let mut row: Vec<String> = table::COLUMNS.iter().map(|c| c.raw(cell)).collect();
        if let Some(p) = price {
            let cost = match cell {
                crate::model::Cell::Decode(d) => {
                    crate::compare::cost::usd_per_million_output_tokens(
                        d,
                        run.meta.hardware.gpu_count,
                        p,
                    )
                }
                crate::model::Cell::Prefill(_) => None,
            };
            row.push(cost.map_or(String::new(), |v| v.to_string()));
        }
        if let Some(e) = electricity {
            let usd = match cell {
                crate::model::Cell::Decode(d) => {
                    crate::compare::cost::electricity_usd_per_million_output_tokens(d, e)
                }
                crate::model::Cell::Prefill(_) => None,
            };
            row.push(usd.map_or(String::new(), |v| v.to_string()));
        }
        w.write_record(row).expect("writing to memory cannot fail");
    }
    finish(w)
}

/// One row per (context, concurrency) any run measured: each run's status and
/// total tok/s, and each run's ratio to the first with the reason when none.
pub(crate) fn comparison_csv(runs: &[Run], comparison: &Comparison) -> String {
    let members: Vec<&Run> = comparison.runs.iter().map(|&i| &runs[i]).collect();
    let base = members[0];
    // The headline figure always; another figure only where a run has it:
    // the file of runs without telemetry stays as it was.
    let figures: Vec<Figure> = Figure::ALL
        .into_iter()
        .enumerate()
        .filter(|&(i, f)| i == 0 || members.iter().any(|r| compare::ratio::has(f, r)))
        .map(|(_, f)| f)
        .collect();
    // "b / a" for the headline, "b / a energy" for another figure.
    let ratio_name = |f: Figure, b: &Run| match f {
        Figure::Throughput => format!("{} / {}", b.id, base.id),
        other => format!("{} / {} {}", b.id, base.id, other.definition().key),
    };
    let mut header = vec!["context_tokens".to_string(), "concurrency".to_string()];
    for r in &members {
        header.push(format!("{} status", r.id));
        for f in &figures {
            let column = f.definition().column;
            header.push(format!("{} {column}", r.id));
            if f.definition().interval.is_some() {
                header.push(format!("{} {column} ci95_low", r.id));
                header.push(format!("{} {column} ci95_high", r.id));
            }
        }
    }
    for r in &members[1..] {
        for &f in &figures {
            let name = ratio_name(f, r);
            if f.definition().interval.is_some() {
                header.push(name.clone());
                header.push(format!("{name} ci95_low"));
                header.push(format!("{name} ci95_high"));
                header.push(format!("{name} noise"));
            } else {
                header.push(name.clone());
            }
            header.push(format!("{name} reason"));
        }
    }
    let mut keys: Vec<(u64, u32)> = members
        .iter()
        .flat_map(|r| r.decode_cells().map(|c| (c.context_tokens, c.concurrency)))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header)
        .expect("writing to memory cannot fail");
    for (ctx, n) in keys {
        let mut row = vec![ctx.to_string(), n.to_string()];
        for r in &members {
            let c = r.decode_cell(ctx, n);
            row.push(
                c.map(|c| c.status.code().to_string())
                    .unwrap_or_else(|| "not_measured".into()),
            );
            for f in &figures {
                let d = f.definition();
                // The cell's own figure, whatever its status (the status
                // column says whether it counts).
                let raw = c.and_then(|c| table::decode_value(d.column, c));
                row.push(num(raw));
                if let Some(interval) = d.interval {
                    let ci = c.and_then(interval);
                    row.push(num(ci.map(|i| i.low)));
                    row.push(num(ci.map(|i| i.high)));
                }
            }
        }
        for r in &members[1..] {
            let (a, b) = (base.decode_cell(ctx, n), r.decode_cell(ctx, n));
            for &f in &figures {
                let d = f.definition();
                match compare::ratio::ratio(f, a, b) {
                    Ok(x) => {
                        row.push(x.to_string());
                        if let Some(interval) = d.interval {
                            let (a, b) = (a.expect("a ratio has both cells"), b.expect("both"));
                            let of = |c| ((d.value)(c).unwrap_or(0.0), interval(c));
                            let range = compare::ratio::ratio_interval(of(a), of(b));
                            row.push(num(range.map(|i| i.0)));
                            row.push(num(range.map(|i| i.1)));
                            row.push(
                                match compare::ratio::cell_verdict(f, a, b) {
                                    compare::ratio::NoiseVerdict::Faster => "faster",
                                    compare::ratio::NoiseVerdict::Slower => "slower",
                                    compare::ratio::NoiseVerdict::WithinNoise => "within_noise",
                                    compare::ratio::NoiseVerdict::Unknown => "unknown",
                                }
                                .into(),
                            );
                        }
                        row.push(String::new());
                    }
                    Err(none) => {
                        let blanks = if d.interval.is_some() { 4 } else { 1 };
                        row.extend(std::iter::repeat_n(String::new(), blanks));
                        row.push(crate::render::compare_words::no_ratio(
                            none,
                            (&base.meta.model, &r.meta.model),
                        ));
                    }
                }
            }
        }
        w.write_record(&row).expect("writing to memory cannot fail");
    }
    finish(w)
}

/// Every decode cell of every run of a series, oldest run first: its total
/// tok/s with its 95% interval, and how it changed from the run before
/// (ratio, and slower / faster / same by the series rule; empty where either
/// run has no valid figure). The bytes after the rows of the first
/// `kept_ends.len()` runs, which end at those offsets (`sitegen serve`
/// keeps the rows of runs whose judgement did not change, where they are:
/// a year of nights is tens of MB), and where each run's rows end.
pub(crate) fn series_csv_after(
    runs: &[&Run],
    series: &crate::judge::series::Series,
    kept_ends: &[usize],
) -> (Vec<u8>, Vec<usize>) {
    let labels = &series.labels;
    let mut ends = Vec::with_capacity(runs.len());
    ends.extend_from_slice(kept_ends);
    let offset = kept_ends.last().copied().unwrap_or(0);
    let from = ends.len();
    let mut w = csv::Writer::from_writer(Vec::new());
    if from == 0 {
        w.write_record([
            "run_id",
            "run_label",
            "measured_at",
            "context_tokens",
            "concurrency",
            "status",
            "total_tok_per_s",
            "total_tok_per_s_ci95_pct",
            "ratio_to_baseline",
            "baseline_runs",
            "change",
        ])
        .expect("writing to memory cannot fail");
    }
    // Years of nightly runs make a large file: each row written from
    // borrowed text and a few reused buffers, not eleven new strings.
    let (mut context, mut level) = (itoa::Buffer::new(), itoa::Buffer::new());
    for (i, (run, label)) in runs.iter().zip(labels).enumerate().skip(from) {
        let judgement = &series.judgements[i];
        let measured_at = run.meta.measured_at.as_deref().unwrap_or_default();
        let mut window = itoa::Buffer::new();
        let baseline_runs = window.format(judgement.baseline.len());
        for cell in run.decode_cells() {
            // The cell as its run's judgement has it, when judged.
            let judged = judgement.cells.iter().find(|c| {
                c.context_tokens == cell.context_tokens && c.concurrency == cell.concurrency
            });
            let word = judged.map_or("", |c| match c.call {
                crate::judge::change::Call::Slower => "slower",
                crate::judge::change::Call::Faster => "faster",
                crate::judge::change::Call::Same => "same",
            });
            w.write_record([
                run.id.as_str(),
                label.as_str(),
                measured_at,
                context.format(cell.context_tokens),
                level.format(cell.concurrency),
                cell.status.code(),
                &num(cell.total_tok_per_s),
                &num(cell.total_noise().map(|n| n * 100.0)),
                &num(judged.map(|c| c.estimate.ratio)),
                judged.map_or("", |_| baseline_runs),
                word,
            ])
            .expect("writing to memory cannot fail");
        }
        w.flush().expect("writing to memory cannot fail");
        ends.push(offset + w.get_ref().len());
    }
    let bytes = w.into_inner().expect("writing to memory cannot fail");
    (bytes, ends)
}

#[cfg(test)]
mod tests {
    use crate::compare::tests::with_cells;
    use crate::model::{Cell, Status::*};

    /// `sitegen serve` keeps a series CSV's rows of unchanged runs: made
    /// after any number of kept runs, the file is the one made whole.
    #[test]
    fn a_series_csv_made_after_kept_rows_is_the_one_made_whole() {
        let runs: Vec<crate::model::Run> = (0..12)
            .map(|i| {
                let f = if i >= 8 {
                    0.8
                } else {
                    1.0 + 0.01 * f64::from(i % 3)
                };
                let mut r = with_cells(
                    "m",
                    &[
                        (1024, 1, Valid, 100.0 * f),
                        (1024, 8, Valid, 500.0 * f),
                        (8192, 1, Error, 0.0),
                    ],
                );
                r.id = format!("m-{i:02}");
                r.meta.measured_at = Some(format!("2026-01-{:02}T00:00:00Z", i + 1));
                r
            })
            .collect();
        let series = crate::judge::series::series(&runs, &Default::default(), &Default::default());
        assert_eq!(series.len(), 1);
        let s = &series[0];
        assert!(
            s.judgements.iter().any(|j| !j.cells.is_empty()),
            "some rows judged"
        );
        let members: Vec<&crate::model::Run> = s.runs.iter().map(|&i| &runs[i]).collect();
        let (whole, ends) = super::series_csv_after(&members, s, &[]);
        assert_eq!(ends.len(), 12);
        assert_eq!(ends.last(), Some(&whole.len()));
        for kept in 1..=12 {
            let (after, ends_again) = super::series_csv_after(&members, s, &ends[..kept]);
            let again = [&whole[..ends[kept - 1]], &after[..]].concat();
            assert_eq!(again, whole, "keeping {kept} runs");
            assert_eq!(ends_again, ends);
        }
    }

    /// The comparison CSV of `runs`: its header and rows.
    fn comparison_of(runs: &[crate::model::Run]) -> (Vec<String>, Vec<Vec<String>>) {
        let c = crate::compare::plan::Comparison {
            id: "a--b".into(),
            title: "A vs B".into(),
            runs: (0..runs.len()).collect(),
            note_markdown: None,
        };
        let text = super::comparison_csv(runs, &c);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        (header, rows)
    }

    #[test]
    fn energy_columns_appear_only_where_a_run_recorded_energy() {
        let a = with_cells("a", &[(8192, 1, Valid, 100.0), (8192, 2, Valid, 180.0)]);
        let mut b = with_cells("b", &[(8192, 1, Valid, 90.0), (8192, 2, Valid, 200.0)]);
        let (plain, _) = comparison_of(&[a.clone(), b.clone()]);
        assert!(!plain.iter().any(|h| h.contains("energy")));
        if let Cell::Decode(d) = &mut b.cells[0] {
            d.gpu_telemetry_mut().joules_per_output_token = Some(2.5);
        }
        let mut a = a;
        if let Cell::Decode(d) = &mut a.cells[0] {
            d.gpu_telemetry_mut().joules_per_output_token = Some(2.0);
        }
        let (header, rows) = comparison_of(&[a, b]);
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(rows[0][col("a joules_per_output_token")], "2");
        assert_eq!(rows[0][col("b / a energy")], "1.25");
        assert_eq!(rows[1][col("b / a energy")], "");
        assert_eq!(
            rows[1][col("b / a energy reason")],
            "both energy not recorded"
        );
    }
}
