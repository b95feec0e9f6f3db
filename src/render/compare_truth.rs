//! Every sentence of a comparison is true of every cell it speaks for: the
//! answer, the best-cell findings and the notes of rows and columns without
//! a ratio are read back from their words and checked against the cells, on
//! pairs built so that a summary would mislead, and on many random pairs.

use super::compare_page::findings::{answer, findings};
use super::compare_page::ratios::ratio_matrix_between;
use crate::compare::ratio::Basis;
use crate::compare::{self, tests::with_cells};
use crate::model::figure::Figure;
use crate::model::format;
use crate::model::{Run, Status};

use Status::*;

const K8: u64 = 8192;
const K16: u64 = 16384;

fn pair_answer(a: &Run, b: &Run) -> Vec<String> {
    answer(
        a,
        b,
        &compare::findings::pair_findings(a, b, Basis::Total),
        Basis::Total,
    )
}

/// GLM against Step in small: A wins every shared cell, B serves twice A's
/// best valid load where A queues (A's queued 2,800 is higher than its
/// valid best and must not count as its peak).
fn faster_a_bigger_b() -> (Run, Run) {
    let levels = [1u32, 2, 4, 8, 16, 32];
    let mut a: Vec<(u64, u32, Status, f64)> = levels
        .iter()
        .map(|&n| {
            (
                K8,
                n,
                Valid,
                100.0 * f64::from(n) * 0.9_f64.powi(n.ilog2() as i32),
            )
        })
        .collect();
    a.extend([
        (K8, 64, RequestsQueued, 2800.0),
        (K8, 128, RequestsQueued, 1500.0),
    ]);
    let mut b: Vec<(u64, u32, Status, f64)> = a[..6]
        .iter()
        .map(|&(c, n, s, t)| (c, n, s, t * 0.8))
        .collect();
    let a_best = a[5].3;
    b.extend([
        (K8, 64, Valid, a_best * 1.4),
        (K8, 128, Valid, a_best * 2.0),
    ]);
    (with_cells("a", &a), with_cells("b", &b))
}

#[test]
fn the_answer_says_who_wins_the_shared_cells_and_whose_peak_is_higher() {
    let (a, b) = faster_a_bigger_b();
    let peak_a = format::tok_per_s(a.decode_cell(K8, 32).unwrap().total_tok_per_s.unwrap());
    let peak_b = format::tok_per_s(b.decode_cell(K8, 128).unwrap().total_tok_per_s.unwrap());
    assert_eq!(
        pair_answer(&a, &b),
        [
            "A is faster in every cell both ran validly (6 cells; B makes 0.80× its total tok/s, median).".to_string(),
            format!("B's peak valid throughput is 2.00× A's: {peak_b} total tok/s at 8K × 128 against {peak_a} at 8K × 32."),
        ]
    );
    // Swapped, the same facts from the other side.
    assert_eq!(
        pair_answer(&b, &a)[0],
        "A is faster in every cell both ran validly (6 cells; 1.25× B's total tok/s, median)."
    );
}

#[test]
fn mixed_shared_cells_are_counted_each_way_and_ties_are_neither() {
    let a = with_cells(
        "a",
        &[
            (K8, 1, Valid, 100.0),
            (K8, 2, Valid, 200.0),
            (K8, 4, Valid, 400.0),
        ],
    );
    let b = with_cells(
        "b",
        &[
            (K8, 1, Valid, 120.0),
            (K8, 2, Valid, 180.0),
            (K8, 4, Valid, 400.4),
        ],
    );
    assert_eq!(
        pair_answer(&a, &b)[0],
        "In the 3 cells both ran validly, B makes 1.00× A's total tok/s (median): B is faster in 1, A in 1, even in 1."
    );
}

#[test]
fn without_shared_cells_only_the_peaks_are_said_and_a_run_without_any_is_named() {
    let a = with_cells("a", &[(K8, 1, Valid, 100.0)]);
    let b = with_cells("b", &[(K16, 4, Valid, 300.0), (K8, 1, Error, 0.0)]);
    assert_eq!(
        pair_answer(&a, &b),
        [
            "B's peak valid throughput is 3.00× A's: 300.0 total tok/s at 16K × 4 against 100.0 at 8K × 1."
        ]
    );
    let none = with_cells("b", &[(K8, 1, OverCapacity, 0.0)]);
    assert_eq!(
        pair_answer(&a, &none),
        ["Only A has a valid decode cell: its peak is 100.0 total tok/s at 8K × 1."]
    );
}

#[test]
fn the_best_cell_at_a_speed_is_the_best_among_cells_that_fast_not_the_peak() {
    let (a, b) = faster_a_bigger_b();
    let f = findings(&[&a, &b]);
    let items = &f.pairs[0].items;
    let at = |label: &str| items.iter().find(|i| i.label == label).unwrap();
    // B's 8K × 128 streams at 2 × 32-request figures / 128 per request: below 50.
    let fast = at("At ≥ 50 tok/s per request");
    let b_cell = b
        .decode_cells()
        .filter(|c| c.status == Valid && c.per_request_tok_per_s.unwrap() >= 50.0)
        .max_by(|x, y| {
            x.total_tok_per_s
                .unwrap()
                .total_cmp(&y.total_tok_per_s.unwrap())
        })
        .unwrap();
    assert!(
        fast.text.contains(&format!(
            "B {} at {}",
            format::tok_per_s(b_cell.total_tok_per_s.unwrap()),
            format::cell_label(b_cell.context_tokens, b_cell.concurrency)
        )),
        "{}",
        fast.text
    );
    assert_ne!(
        b_cell.concurrency, 128,
        "the peak streams too slowly to count"
    );
    let peak = at("Peak");
    assert_eq!(peak.figure.as_deref(), Some("2.00×"));
    assert!(peak.text.contains("at 8K × 128"), "{}", peak.text);
}

// ------------------------------------------------- notes, read back

/// A run's state at a cell as the notes word it, given both runs' cells
/// there: "measured 0 tok/s" only for the first run, when both are valid;
/// of an energy ratio, "energy not recorded" for a valid cell without it.
fn state_of(
    side: usize,
    a: Option<&crate::model::DecodeCell>,
    b: Option<&crate::model::DecodeCell>,
    figure: Figure,
) -> &'static str {
    let energy = figure == Figure::Energy;
    let base = |c: Option<&crate::model::DecodeCell>| match c {
        None => "not measured",
        Some(c) if c.status == Valid && energy && c.joules_per_output_token().is_none() => {
            "energy not recorded"
        }
        Some(c) => c.status.not_compared_because().unwrap_or("valid"),
    };
    let (sa, sb) = (base(a), base(b));
    if !energy && sa == "valid" && sb == "valid" && a.unwrap().total_tok_per_s == Some(0.0) {
        return ["measured 0 tok/s", "valid"][side];
    }
    [sa, sb][side]
}

/// The cells a note speaks of, read back from its words: for each run
/// named, (state, cell labels) pairs; a run said in one state covers every
/// cell of the note (`all`).
fn read_note(note: &str, all: &[String; 2], names: [&str; 2]) -> [Vec<(String, String)>; 2] {
    let body = note.split_once(": ").unwrap().1.strip_suffix('.').unwrap();
    let mut out: [Vec<(String, String)>; 2] = [Vec::new(), Vec::new()];
    for side in body.split("; ") {
        let i = names
            .iter()
            .position(|n| side.starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("no run named in {side:?} of {note:?}"));
        let rest = &side[names[i].len() + 1..];
        if !rest.contains(" at ") {
            for label in all[i].split('|') {
                out[i].push((rest.to_string(), label.to_string()));
            }
            continue;
        }
        let mut state = String::new();
        for token in rest.split(", ") {
            let cells = match token.split_once(" at ") {
                Some((s, cells)) => {
                    state = s.to_string();
                    cells
                }
                None => token,
            };
            let cells = cells
                .trim_end_matches(" requests")
                .trim_end_matches(" request");
            out[i].push((state.clone(), cells.to_string()));
        }
    }
    out
}

/// The labels a stretch "first–last" covers among `labels`.
fn expand(stretch: &str, labels: &[String]) -> Vec<String> {
    match stretch.split_once('–') {
        Some((first, last)) => {
            let i = labels.iter().position(|l| l == first).unwrap();
            let j = labels.iter().position(|l| l == last).unwrap();
            labels[i..=j].to_vec()
        }
        None => vec![stretch.to_string()],
    }
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_run(rng: &mut Rng, id: &str) -> Run {
    // 256K and 251K pair within 2%; 0 (no prompt) labels unlike the others.
    let contexts = [0u64, K8, K16, 65_536, 262_144, 257_024];
    let statuses = [Valid, Valid, RequestsQueued, OverCapacity, Looped, Error];
    let mut cells = Vec::new();
    for &ctx in &contexts {
        if rng.below(3) == 0 {
            continue;
        }
        for n in [1u32, 2, 4, 8, 16] {
            if rng.below(5) == 0 {
                continue;
            }
            let status = statuses[rng.below(statuses.len() as u64) as usize];
            let total = if rng.below(15) == 0 {
                0.0
            } else {
                (10 + rng.below(5000)) as f64
            };
            cells.push((ctx, n, status, total));
        }
    }
    let mut run = with_cells(id, &cells);
    // Most runs record energy in most cells, some in none.
    if rng.below(4) != 0 {
        for cell in run.cells.iter_mut() {
            if let crate::model::Cell::Decode(d) = cell
                && rng.below(4) != 0
            {
                set_energy(d, (1 + rng.below(400)) as f64 / 100.0);
            }
        }
    }
    run
}

fn set_energy(cell: &mut crate::model::DecodeCell, joules: f64) {
    cell.gpu_telemetry_mut().joules_per_output_token = Some(joules);
}

#[test]
fn every_note_of_a_row_or_column_without_a_ratio_is_true_of_each_cell_it_names() {
    let mut rng = Rng(27);
    let mut notes = 0;
    let figures = [
        (Figure::Throughput, Basis::Total),
        (Figure::Energy, Basis::Total),
    ];
    for case in 0..1200 {
        let figure = figures[case % 2];
        let (a, b) = (random_run(&mut rng, "a"), random_run(&mut rng, "b"));
        let m = ratio_matrix_between(&a, &b, "r".into(), "h".into(), ("A", "B"), figure);
        let grid = compare::grid::RatioGrid::of(&a, &b, figure.0, figure.1);
        if m.rows.is_empty() {
            continue; // one line: no ratio anywhere
        }
        let own = |p: &compare::grid::ContextPair, c: Option<u64>| {
            c.map_or_else(|| p.label(), format::context_label)
        };
        for note in &m.left_out {
            notes += 1;

            let ctx = |r: usize, side: usize| [grid.rows[r].a, grid.rows[r].b][side];
            // The cells the note covers: (side labels, (row, level)).
            let covered: Vec<(usize, usize)> = if let Some(rest) = note.strip_prefix("No ratio at ")
            {
                if let Some((n, _)) = rest.split_once(" requests at once:") {
                    let l = grid.levels.iter().position(|x| x.to_string() == n).unwrap();
                    (0..grid.rows.len())
                        .filter(|&r| grid.row_has_ratio(r))
                        .map(|r| (r, l))
                        .collect()
                } else {
                    let label = rest.split_once(": ").unwrap().0;
                    let r = grid.rows.iter().position(|p| p.label() == label).unwrap();
                    (0..grid.levels.len()).map(|l| (r, l)).collect()
                }
            } else {
                panic!("case {case}: unexpected note {note:?}");
            };
            let by_row = note.contains(" requests at once:");
            let cells_at = |r: usize, l: usize| {
                let n = grid.levels[l];
                (
                    ctx(r, 0).and_then(|c| a.decode_cell(c, n)),
                    ctx(r, 1).and_then(|c| b.decode_cell(c, n)),
                )
            };
            let label_of = |side: usize, (r, l): (usize, usize)| {
                if by_row {
                    own(&grid.rows[r], ctx(r, side))
                } else {
                    grid.levels[l].to_string()
                }
            };
            // Cells neither run measured say nothing and are passed over.
            let spoken: Vec<(usize, usize)> = covered
                .iter()
                .copied()
                .filter(|&(r, l)| {
                    let (ca, cb) = cells_at(r, l);
                    ca.is_some() || cb.is_some()
                })
                .collect();
            if note.ends_with(&format!(
                "{}.",
                crate::render::compare_words::NEITHER_AT_ROWS_SHOWN
            )) {
                assert!(spoken.is_empty(), "case {case}: {note:?}");
                continue;
            }
            let all: [String; 2] = [0, 1].map(|side| {
                spoken
                    .iter()
                    .map(|&c| label_of(side, c))
                    .collect::<Vec<_>>()
                    .join("|")
            });
            let read = read_note(note, &all, ["A", "B"]);
            for (side, states) in read.iter().enumerate() {
                let labels: Vec<String> = spoken.iter().map(|&c| label_of(side, c)).collect();
                let mut named: Vec<String> = Vec::new();
                for (state, stretch) in states {
                    for label in expand(stretch, &labels) {
                        let at = spoken[labels.iter().position(|l| *l == label).unwrap()];
                        let (ca, cb) = cells_at(at.0, at.1);
                        let truth = state_of(side, ca, cb, figure.0);
                        assert_eq!(truth, state, "case {case}: {note:?}: {label}");
                        named.push(label);
                    }
                }
                named.sort();
                let mut expected = labels.clone();
                expected.sort();
                assert_eq!(
                    named, expected,
                    "case {case}: {note:?} must name every cell once"
                );
            }
        }
    }
    assert!(notes > 600, "only {notes} notes were checked");
}

#[test]
fn every_answer_is_true_of_the_cells_of_random_pairs() {
    let mut rng = Rng(2027);
    for case in 0..600 {
        let (a, b) = (random_run(&mut rng, "a"), random_run(&mut rng, "b"));
        let sentences = pair_answer(&a, &b);
        let valid = |r: &Run| -> Vec<(u64, u32, f64)> {
            r.decode_cells()
                .filter(|c| c.status == Valid)
                .map(|c| (c.context_tokens, c.concurrency, c.total_tok_per_s.unwrap()))
                .collect()
        };
        let (va, vb) = (valid(&a), valid(&b));
        let best = |v: &[(u64, u32, f64)]| {
            v.iter()
                .copied()
                .max_by(|x, y| x.2.total_cmp(&y.2).then(y.1.cmp(&x.1)).then(y.0.cmp(&x.0)))
        };
        let cell = |c: (u64, u32, f64)| {
            format!(
                "{} total tok/s at {}",
                format::tok_per_s(c.2),
                format::cell_label(c.0, c.1)
            )
        };
        let peak_sentence = sentences.last();
        match (best(&va), best(&vb)) {
            (Some(x), Some(y)) if x.2 > 0.0 => {
                let s = peak_sentence.unwrap();
                let (hi, lo, r) = if format::ratio(y.2 / x.2) == format::ratio(1.0) {
                    assert!(
                        s.starts_with("Their peak valid throughputs are even"),
                        "case {case}: {s}"
                    );
                    continue;
                } else if y.2 > x.2 {
                    (("B", y), ("A", x), y.2 / x.2)
                } else {
                    (("A", x), ("B", y), x.2 / y.2)
                };
                let want = format!(
                    "{}'s peak valid throughput is {} {}'s: {} against {} at {}.",
                    hi.0,
                    format::ratio(r),
                    lo.0,
                    cell(hi.1),
                    format::tok_per_s(lo.1.2),
                    format::cell_label(lo.1.0, lo.1.1)
                );
                assert_eq!(s, &want, "case {case}");
            }
            (Some(x), None) => assert_eq!(
                peak_sentence.unwrap(),
                &format!("Only A has a valid decode cell: its peak is {}.", cell(x)),
                "case {case}"
            ),
            (None, Some(y)) => assert_eq!(
                peak_sentence.unwrap(),
                &format!("Only B has a valid decode cell: its peak is {}.", cell(y)),
                "case {case}"
            ),
            _ => {}
        }
        // The shared-cells sentence: its count and its winners, cell by cell.
        let grid = compare::grid::RatioGrid::between(&a, &b, Basis::Total);
        let ratios: Vec<f64> = grid.ratios().collect();
        if ratios.is_empty() {
            assert!(sentences.len() <= 1, "case {case}: {sentences:?}");
            continue;
        }
        let first = &sentences[0];
        let shown = |r: f64| format::ratio(r);
        let above = ratios
            .iter()
            .filter(|&&r| r > 1.0 && shown(r) != shown(1.0))
            .count();
        let below = ratios
            .iter()
            .filter(|&&r| r < 1.0 && shown(r) != shown(1.0))
            .count();
        let cells = format::counted(ratios.len(), "cell");
        if below == ratios.len() {
            assert!(
                first.starts_with(&format!(
                    "A is faster in every cell both ran validly ({cells};"
                )),
                "case {case}: {first}"
            );
        } else if above == ratios.len() {
            assert!(
                first.starts_with(&format!(
                    "B is faster in every cell both ran validly ({cells};"
                )),
                "case {case}: {first}"
            );
        } else {
            assert!(
                first.starts_with(&format!("In the {cells} both ran validly")),
                "case {case}: {first}"
            );
            assert!(
                first.contains(&format!("B is faster in {above}, A in {below}")),
                "case {case}: {first}"
            );
        }
    }
}

// ------------------------------------------------- energy

/// The energy line of a pair's key findings.
fn energy_line(a: &Run, b: &Run) -> Option<(Option<String>, String)> {
    findings(&[a, b]).pairs[0]
        .items
        .iter()
        .find(|i| i.label == "Energy")
        .map(|i| (i.figure.clone(), i.text.clone()))
}

#[test]
fn the_energy_line_counts_only_cells_both_ran_validly_with_energy_recorded() {
    // A is faster everywhere but spends more per token; B's queued 8K × 8
    // has the lowest energy of all and must not count, nor A's 8K × 4,
    // valid without its energy.
    let mut a = with_cells(
        "a",
        &[
            (K8, 1, Valid, 100.0),
            (K8, 2, Valid, 190.0),
            (K8, 4, Valid, 350.0),
            (K8, 8, Valid, 600.0),
        ],
    );
    let mut b = with_cells(
        "b",
        &[
            (K8, 1, Valid, 80.0),
            (K8, 2, Valid, 150.0),
            (K8, 4, Valid, 280.0),
            (K8, 8, RequestsQueued, 500.0),
        ],
    );
    for (run, joules) in [
        (&mut a, [4.0, 2.0, 1.0, 0.5]),
        (&mut b, [3.0, 1.6, 0.9, 0.1]),
    ] {
        for (cell, j) in run.cells.iter_mut().zip(joules) {
            if let crate::model::Cell::Decode(d) = cell {
                set_energy(d, j);
            }
        }
    }
    if let Some(crate::model::Cell::Decode(d)) = a.cells.get_mut(2) {
        d.telemetry = None;
    }
    let (figure, text) = energy_line(&a, &b).unwrap();
    // 3.0 / 4.0 and 1.6 / 2.0: the median of 0.75 and 0.80.
    assert_eq!(figure.as_deref(), Some("0.78×"));
    assert_eq!(
        text,
        "B's energy per output token over A's, median of 2 cells both ran validly with their GPUs' energy recorded (0.75× to 0.80×); B uses less in 2, A in 0."
    );
    // The matrix says why 8K × 4 and 8K × 8 have no ratio.
    let m = ratio_matrix_between(
        &a,
        &b,
        "e".into(),
        "h".into(),
        ("A", "B"),
        (Figure::Energy, Basis::Total),
    );
    assert_eq!(m.levels, [1, 2]);
    assert_eq!(
        m.left_out,
        [
            "No ratio at 4 requests at once: A energy not recorded; B valid.",
            "No ratio at 8 requests at once: A valid; B queued."
        ]
    );
    // Less energy takes the colour of faster.
    assert_eq!(m.rows[0].cells[0].class, "faster");
    // A run without energy is named, and two without say nothing.
    let plain = with_cells("c", &[(K8, 1, Valid, 90.0)]);
    assert_eq!(
        energy_line(&a, &plain).unwrap().1,
        "Only A recorded its GPUs' energy: no energy ratio to give."
    );
    assert_eq!(
        energy_line(&plain, &b).unwrap().1,
        "Only B recorded its GPUs' energy: no energy ratio to give."
    );
    assert!(energy_line(&plain, &with_cells("d", &[(K8, 1, Valid, 1.0)])).is_none());
}

#[test]
fn every_energy_line_is_true_of_the_cells_of_random_pairs() {
    let mut rng = Rng(31);
    let (mut with_ratio, mut without) = (0, 0);
    for case in 0..600 {
        let (a, b) = (random_run(&mut rng, "a"), random_run(&mut rng, "b"));
        let line = energy_line(&a, &b);
        let recorded = |r: &Run| {
            r.decode_cells()
                .any(|c| c.joules_per_output_token().is_some())
        };
        // The truth, from the cells alone: b's J over a's wherever both are
        // Valid with energy, contexts paired as the matrices pair them.
        let mut truth = Vec::new();
        for p in compare::grid::pair_contexts(&a.decode_contexts(), &b.decode_contexts()) {
            for n in [1u32, 2, 4, 8, 16] {
                let energy = |r: &Run, ctx: Option<u64>| {
                    ctx.and_then(|c| r.decode_cell(c, n))
                        .filter(|c| c.status == Valid)
                        .and_then(|c| c.joules_per_output_token())
                };
                if let (Some(x), Some(y)) = (energy(&a, p.a), energy(&b, p.b)) {
                    truth.push(y / x);
                }
            }
        }
        match (recorded(&a), recorded(&b)) {
            (false, false) => assert!(line.is_none(), "case {case}: {line:?}"),
            (ra, rb) if truth.is_empty() => {
                without += 1;
                let text = line.unwrap().1;
                let want = match (ra, rb) {
                    (true, true) => Figure::Energy
                        .definition()
                        .words
                        .finding_none_shared
                        .to_string(),
                    (true, false) => {
                        "Only A recorded its GPUs' energy: no energy ratio to give.".into()
                    }
                    _ => "Only B recorded its GPUs' energy: no energy ratio to give.".into(),
                };
                assert_eq!(text, want, "case {case}");
            }
            _ => {
                with_ratio += 1;
                let (figure, text) = line.unwrap();
                let shown = |r: f64| format::ratio(r);
                let less = truth
                    .iter()
                    .filter(|&&r| r < 1.0 && shown(r) != shown(1.0))
                    .count();
                let more = truth
                    .iter()
                    .filter(|&&r| r > 1.0 && shown(r) != shown(1.0))
                    .count();
                let median = crate::stats::median(truth.clone()).unwrap();
                assert_eq!(figure, Some(shown(median)), "case {case}");
                let lo = truth.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = truth.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(
                    text,
                    format!(
                        "B's energy per output token over A's, median of {} cells both ran validly with their GPUs' energy recorded ({} to {}); B uses less in {less}, A in {more}.",
                        truth.len(),
                        shown(lo),
                        shown(hi)
                    ),
                    "case {case}"
                );
            }
        }
    }
    assert!(
        with_ratio > 100 && without > 100,
        "{with_ratio} with a ratio, {without} without"
    );
}
