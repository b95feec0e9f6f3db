//! The answer first and the key findings of a comparison, in words, from compare/findings.rs.

use crate::compare;
use crate::compare::ratio::Basis;
use crate::model::Run;
use crate::model::format;

use super::charts::tok_per_s_name;

/// The key findings of a comparison.
pub(crate) struct Findings {
    /// One group per run after the first, against the first.
    pub pairs: Vec<FindingGroup>,
    /// How far each run reaches, one line per run.
    pub reach: Vec<String>,
}

pub(crate) struct FindingGroup {
    /// "Step against GLM", when more than two runs are compared.
    pub heading: Option<String>,
    /// The answer, first: who is faster where both ran, and whose peak is higher.
    pub answer: Vec<String>,
    pub items: Vec<Finding>,
}

/// "Decode: **0.81×** Step's total tok/s over GLM's, median of …".
pub(crate) struct Finding {
    pub label: String,
    pub figure: Option<String>,
    pub text: String,
}

/// What a reader came for: each run against the first (decode on the fair
/// basis, by context, prefill, what could not be compared) and each run's
/// reach. Figures from `compare`, words from `compare_words`.
pub(crate) fn findings(runs: &[&Run]) -> Findings {
    use crate::render::compare_words as w;
    let basis = compare::findings::findings_basis(runs);
    let a = runs[0];
    let (an, figure) = (a.meta.model.as_str(), tok_per_s_name(basis));
    let pairs = runs[1..]
        .iter()
        .map(|b| {
            let f = compare::findings::pair_findings(a, b, basis);
            let bn = b.meta.model.as_str();
            let names = [("a", an), ("b", bn)];
            let mut items = best_findings(a, b, &f, basis);
            match f.decode {
                Some(d) => {
                    items.push(Finding {
                        label: w::FINDING_DECODE.into(),
                        figure: Some(format::ratio(d.median)),
                        text: w::fill(
                            w::FINDING_DECODE_TEXT,
                            &[
                                names[0],
                                names[1],
                                ("figure", figure),
                                ("count", &d.count.to_string()),
                                ("min", &format::ratio(d.min)),
                                ("max", &format::ratio(d.max)),
                                ("above", &d.above.to_string()),
                                ("below", &d.below.to_string()),
                            ],
                        ),
                    });
                    items.push(Finding {
                        label: w::FINDING_NOISE.into(),
                        figure: None,
                        text: if f.noise_unknown == d.count {
                            w::FINDING_NOISE_UNKNOWN.into()
                        } else {
                            w::fill(
                                w::FINDING_NOISE_TEXT,
                                &[
                                    ("within", &f.within_noise.to_string()),
                                    ("beyond", &f.beyond_noise.to_string()),
                                    ("unknown", &f.noise_unknown.to_string()),
                                ],
                            )
                        },
                    });
                    items.push(Finding {
                        label: w::FINDING_BY_CONTEXT.into(),
                        figure: None,
                        text: f
                            .decode_by_context
                            .iter()
                            .map(|(context, r)| {
                                w::fill(
                                    w::FINDING_BY_CONTEXT_ITEM,
                                    &[("context", context), ("ratio", &format::ratio(*r))],
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(" · "),
                    });
                }
                None => items.push(Finding {
                    label: w::FINDING_DECODE.into(),
                    figure: None,
                    text: w::fill(w::FINDING_NO_DECODE, &names),
                }),
            }
            items.extend(
                f.other_figures
                    .iter()
                    .filter_map(|o| figure_finding(a, b, o)),
            );
            if let Some(p) = f.prefill {
                let faster = if f.prefill_faster_at.is_empty() {
                    String::new()
                } else {
                    w::fill(
                        w::FINDING_PREFILL_FASTER,
                        &[("b", bn), ("contexts", &f.prefill_faster_at.join(", "))],
                    )
                };
                items.push(Finding {
                    label: w::FINDING_PREFILL.into(),
                    figure: Some(format::ratio(p.median)),
                    text: w::fill(
                        w::FINDING_PREFILL_TEXT,
                        &[
                            names[0],
                            names[1],
                            ("count", &p.count.to_string()),
                            ("min", &format::ratio(p.min)),
                            ("max", &format::ratio(p.max)),
                            ("faster", &faster),
                        ],
                    ),
                });
            }
            let not_compared = f.one_side_only + f.not_valid;
            if not_compared > 0 {
                items.push(Finding {
                    label: w::FINDING_NOT_COMPARED.into(),
                    figure: None,
                    text: w::fill(
                        w::FINDING_NOT_COMPARED_TEXT,
                        &[
                            ("n", &not_compared.to_string()),
                            ("one", &f.one_side_only.to_string()),
                            ("invalid", &f.not_valid.to_string()),
                        ],
                    ),
                });
            }
            FindingGroup {
                heading: (runs.len() > 2).then(|| w::fill(w::FINDINGS_PAIR, &names)),
                answer: answer(a, b, &f, basis),
                items,
            }
        })
        .collect();
    let reach = runs
        .iter()
        .map(|r| {
            let name = r.meta.model.as_str();
            let reach = compare::findings::reach(r);
            match (reach.largest_context, reach.most_requests) {
                (Some(ctx), Some((n, at))) => w::fill(
                    w::FINDING_REACH_RUN,
                    &[
                        ("name", name),
                        ("context", &format::context_label(ctx)),
                        ("requests", &format::counted(n as usize, "request")),
                        ("at", &format::context_label(at)),
                    ],
                ),
                _ => w::fill(w::FINDING_REACH_NONE, &[("name", name)]),
            }
        })
        .collect();
    Findings { pairs, reach }
}

/// The line of a pair's findings for a figure beyond the headline, when
/// either run has it: b's figure over a's where both have it, or who lacks it.
pub(super) fn figure_finding(
    a: &Run,
    b: &Run,
    f: &compare::findings::FigureFindings,
) -> Option<Finding> {
    use crate::model::figure::Better;
    use crate::render::compare_words as w;
    let words = &f.figure.definition().words;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let text = match (f.summary, f.recorded) {
        (_, [false, false]) => return None,
        (Some(e), _) => {
            let (b_better, a_better) = match f.figure.definition().better {
                Better::Higher => (e.above, e.below),
                Better::Lower => (e.below, e.above),
            };
            return Some(Finding {
                label: words.finding_label.into(),
                figure: Some(format::ratio(e.median)),
                text: w::fill(
                    words.finding_text,
                    &[
                        ("a", an),
                        ("b", bn),
                        ("count", &e.count.to_string()),
                        ("min", &format::ratio(e.min)),
                        ("max", &format::ratio(e.max)),
                        ("b_better", &b_better.to_string()),
                        ("a_better", &a_better.to_string()),
                    ],
                ),
            });
        }
        (None, [true, true]) => words.finding_none_shared.to_string(),
        (None, [recorded_a, _]) => w::fill(
            words.finding_one,
            &[("name", if recorded_a { an } else { bn })],
        ),
    };
    Some(Finding {
        label: words.finding_label.into(),
        figure: None,
        text,
    })
}

/// The answer to "which is faster, where, and by how much": who wins the
/// cells both ran validly, and whose peak valid throughput is higher. Each
/// sentence is about the cells it names (tests/compare_findings.rs checks
/// them against the cells of pairs where a summary would mislead).
pub(crate) fn answer(
    a: &Run,
    b: &Run,
    f: &compare::findings::PairFindings,
    basis: Basis,
) -> Vec<String> {
    use crate::render::compare_words as w;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let figure = tok_per_s_name(basis);
    let mut out = Vec::new();
    if let Some(d) = f.decode {
        let cells = format::counted(d.count, "cell");
        let median = format::ratio(d.median);
        let slots = [
            ("a", an),
            ("b", bn),
            ("cells", cells.as_str()),
            ("median", median.as_str()),
            ("figure", figure),
        ];
        out.push(if d.below == d.count {
            w::fill(w::ANSWER_ALL_A, &slots)
        } else if d.above == d.count {
            w::fill(w::ANSWER_ALL_B, &slots)
        } else {
            let (above, below) = (d.above.to_string(), d.below.to_string());
            let ties = d.count - d.above - d.below;
            let even = if ties > 0 {
                w::fill(w::ANSWER_EVEN_IN, &[("n", &ties.to_string())])
            } else {
                String::new()
            };
            let mut slots = slots.to_vec();
            slots.extend([
                ("above", above.as_str()),
                ("below", below.as_str()),
                ("even", even.as_str()),
            ]);
            w::fill(w::ANSWER_MIXED, &slots)
        });
    }
    let shown = |run: &Run, c: &compare::findings::BestCell| {
        format::tok_per_s(basis.of(run, c.total_tok_per_s))
    };
    match (f.peak.a, f.peak.b, f.peak.ratio) {
        (Some(pa), Some(pb), Some(r)) => {
            let even = format::ratio(r) == format::ratio(1.0);
            out.push(if even {
                w::fill(
                    w::ANSWER_PEAK_EVEN,
                    &[
                        ("ratio", &format::ratio(r)),
                        ("a", an),
                        ("b", bn),
                        ("a_total", &shown(a, &pa)),
                        ("b_total", &shown(b, &pb)),
                        ("a_at", &pa.at()),
                        ("b_at", &pb.at()),
                        ("figure", figure),
                    ],
                )
            } else {
                // The higher over the lower, so the figure reads as "2.06×".
                let ((hi, hi_run, hc), (lo, lo_run, lc), ratio) = if r > 1.0 {
                    ((bn, b, pb), (an, a, pa), r)
                } else {
                    ((an, a, pa), (bn, b, pb), 1.0 / r)
                };
                w::fill(
                    w::ANSWER_PEAK,
                    &[
                        ("hi", hi),
                        ("lo", lo),
                        ("ratio", &format::ratio(ratio)),
                        ("hi_total", &shown(hi_run, &hc)),
                        ("lo_total", &shown(lo_run, &lc)),
                        ("hi_at", &hc.at()),
                        ("lo_at", &lc.at()),
                        ("figure", figure),
                    ],
                )
            });
        }
        (Some(p), None, _) | (None, Some(p), _) => {
            let run = if f.peak.a.is_some() { a } else { b };
            out.push(w::fill(
                w::ANSWER_PEAK_ONE,
                &[
                    ("name", run.meta.model.as_str()),
                    ("total", &shown(run, &p)),
                    ("at", &p.at()),
                    ("figure", figure),
                ],
            ));
        }
        _ => {}
    }
    out
}

/// The findings of each run's best cells: its peak, and its most
/// throughput at each per-request speed.
pub(super) fn best_findings(
    a: &Run,
    b: &Run,
    f: &compare::findings::PairFindings,
    basis: Basis,
) -> Vec<Finding> {
    use crate::render::compare_words as w;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    let figure = tok_per_s_name(basis);
    let shown = |run: &Run, c: &compare::findings::BestCell| {
        format::tok_per_s(basis.of(run, c.total_tok_per_s))
    };
    let per_request = |c: &compare::findings::BestCell| {
        c.per_request_tok_per_s
            .map_or_else(|| format::DASH.to_string(), format::tok_per_s)
    };
    let mut items = Vec::new();
    if let (Some(pa), Some(pb), Some(r)) = (f.peak.a, f.peak.b, f.peak.ratio) {
        let per_gpu = |run: &Run, c: &compare::findings::BestCell| {
            format::tok_per_s(Basis::PerGpu.of(run, c.total_tok_per_s))
        };
        items.push(Finding {
            label: w::FINDING_PEAK.into(),
            figure: Some(format::ratio(r)),
            text: w::fill(
                w::FINDING_PEAK_TEXT,
                &[
                    ("a", an),
                    ("b", bn),
                    ("figure", figure),
                    ("a_total", &format::tok_per_s(pa.total_tok_per_s)),
                    ("b_total", &format::tok_per_s(pb.total_tok_per_s)),
                    ("a_per_gpu", &per_gpu(a, &pa)),
                    ("b_per_gpu", &per_gpu(b, &pb)),
                    ("a_at", &pa.at()),
                    ("b_at", &pb.at()),
                ],
            ),
        });
    }
    for (speed, pair) in &f.at_speed {
        let speed_text = format::trim_number(*speed);
        let label = w::fill(w::FINDING_AT_SPEED, &[("speed", &speed_text)]);
        match (pair.a, pair.b, pair.ratio) {
            (Some(ca), Some(cb), Some(r)) => items.push(Finding {
                label,
                figure: Some(format::ratio(r)),
                text: w::fill(
                    w::FINDING_AT_SPEED_TEXT,
                    &[
                        ("a", an),
                        ("b", bn),
                        ("figure", figure),
                        ("speed", &speed_text),
                        ("a_total", &shown(a, &ca)),
                        ("b_total", &shown(b, &cb)),
                        ("a_at", &ca.at()),
                        ("b_at", &cb.at()),
                        ("a_per", &per_request(&ca)),
                        ("b_per", &per_request(&cb)),
                    ],
                ),
            }),
            (Some(c), None, _) | (None, Some(c), _) => {
                let run = if pair.a.is_some() { a } else { b };
                items.push(Finding {
                    label,
                    figure: None,
                    text: w::fill(
                        w::FINDING_AT_SPEED_ONE,
                        &[
                            ("name", run.meta.model.as_str()),
                            ("speed", &speed_text),
                            ("total", &shown(run, &c)),
                            ("figure", figure),
                            ("at", &c.at()),
                            ("per", &per_request(&c)),
                        ],
                    ),
                });
            }
            _ => {}
        }
    }
    items
}

/// One line per tier: how many requests each run serves within it, context
/// by context where both can be judged, with b's capacity over a's; or who
/// does not state the percentile.
/// Which run keeps agents fast: per workload both ran, B's TTFT at the
/// deepest turn both reached with the most sessions both measured, over A's,
/// with the cold prompts, the cache's share and tok/s beside.
pub(super) fn sessions_findings(a: &Run, b: &Run) -> Vec<Finding> {
    use crate::compare::sessions::{Paired, cache_share, pair};
    use crate::render::capacity::ms;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    match pair(a, b) {
        Paired::None => Vec::new(),
        Paired::DifferentWorkloads => vec![Finding {
            label: "Sessions".into(),
            figure: None,
            text: "Not compared: both runs measured sessions, of different workloads.".into(),
        }],
        Paired::Pairs(pairs) => pairs
            .iter()
            .map(|p| {
                let (wa, da) = p.a;
                let (wb, db) = p.b;
                let cold = match (da.cold_ttft_ms, db.cold_ttft_ms) {
                    (Some(x), Some(y)) => format!("; a cold prompt: {} and {}", ms(y), ms(x)),
                    _ => String::new(),
                };
                let cached = match (cache_share(wa), cache_share(wb)) {
                    (Some(x), Some(y)) => format!(
                        "; cached share of the prompts {} and {}",
                        format::share(y.share()),
                        format::share(x.share())
                    ),
                    _ => String::new(),
                };
                let tok = match (wa.total_tok_per_s, wb.total_tok_per_s) {
                    (Some(x), Some(y)) => format!(
                        "; {} and {} tok/s in all",
                        format::tok_per_s(y),
                        format::tok_per_s(x)
                    ),
                    _ => String::new(),
                };
                Finding {
                    label: "Sessions".into(),
                    figure: p.ttft_ratio().map(format::ratio),
                    text: format!(
                        "{bn}'s TTFT over {an}'s with {} ({}), at turn {}: {} against {} ({bn} first){cold}{cached}{tok}.",
                        format::counted(p.sessions as usize, "session"),
                        crate::render::sessions::workload_words(&p.workload),
                        da.turn,
                        ms(db.ttft_median_ms().unwrap_or_default()),
                        ms(da.ttft_median_ms().unwrap_or_default()),
                    ),
                }
            })
            .collect(),
    }
}

pub(super) fn capacity_findings(
    a: &Run,
    b: &Run,
    slo: &crate::model::slo::SloFile,
) -> Vec<Finding> {
    use crate::compare::capacity::{PairAtTier, pair};
    use crate::render::capacity::tier_limits;
    let (an, bn) = (a.meta.model.as_str(), b.meta.model.as_str());
    // Tiers are judged on decode cells: runs with none on either side
    // (sessions or paced load only) have their budgets on their pages.
    if a.decode_cells().next().is_none() && b.decode_cells().next().is_none() {
        return Vec::new();
    }
    slo.tiers
        .iter()
        .map(|t| {
            let text = match pair(a, b, t) {
                PairAtTier::Both(rows) => {
                    let count =
                        |n: Option<u32>| n.map_or_else(|| "none".to_string(), |n| n.to_string());
                    let items: Vec<String> = rows
                        .iter()
                        .map(|&(ctx, na, nb)| {
                            let ratio = match (na, nb) {
                                (Some(x), Some(y)) if x > 0 => {
                                    format!(" ({})", format::ratio(f64::from(y) / f64::from(x)))
                                }
                                _ => String::new(),
                            };
                            format!(
                                "{}: {bn} {}, {an} {}{ratio}",
                                format::context_label(ctx),
                                count(nb),
                                count(na)
                            )
                        })
                        .collect();
                    format!(
                        "Requests at once each serves within {}: {}.",
                        tier_limits(t),
                        items.join(" · ")
                    )
                }
                PairAtTier::Unjudged { a: true, b: true } => {
                    format!("No context is judged at {} in both runs.", tier_limits(t))
                }
                PairAtTier::Unjudged { a: ja, b: jb } => {
                    let pct = crate::render::capacity::percentile_name(t.percentile);
                    let lacking: Vec<(&Run, &str)> = [(a, an, ja), (b, bn, jb)]
                        .into_iter()
                        .filter(|&(_, _, judged)| !judged)
                        .map(|(r, name, _)| (r, name))
                        .collect();
                    // A run with no decode cell (sessions or paced load
                    // only) has no cells to state anything: said per run.
                    let cell_less = |r: &Run| r.decode_cells().next().is_none();
                    if lacking.iter().any(|&(r, _)| cell_less(r)) {
                        let each: Vec<String> = lacking
                            .iter()
                            .map(|&(r, name)| match cell_less(r) {
                                true => format!("{name} has no decode cell"),
                                false => format!("{name}'s cells state no {pct} latencies"),
                            })
                            .collect();
                        format!(
                            "Not recorded: {} (the tier asks {}).",
                            each.join(" and "),
                            tier_limits(t)
                        )
                    } else {
                        let who = match lacking[..] {
                            [(_, one)] => format!("{one}: its cells state"),
                            _ => format!("{an} and {bn}: their cells state"),
                        };
                        format!(
                            "Not recorded for {who} no {pct} latencies (the tier asks {}).",
                            tier_limits(t)
                        )
                    }
                }
            };
            Finding {
                label: format!("Within {}", t.name),
                figure: None,
                text,
            }
        })
        .collect()
}

#[cfg(test)]
mod sessions_tests {
    use super::sessions_findings;
    use crate::compare::sessions::tests::{run, window};

    #[test]
    fn a_sessions_finding_sets_b_s_ttft_over_a_s_at_the_deepest_shared_turn() {
        let d = [(300.0, 400.0, 1024, 1280), (100.0, 500.0, 1280, 1600)];
        let slower = [(300.0, 400.0, 1024, 1280), (250.0, 500.0, 1280, 1600)];
        let mut a = run(vec![window(4, &d, 500.0, 30)]);
        a.meta.model = "GLM".into();
        let mut b = run(vec![window(4, &slower, 500.0, 30)]);
        b.meta.model = "Step".into();
        let f = sessions_findings(&a, &b);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].figure.as_deref(), Some("2.50×"));
        assert_eq!(
            f[0].text,
            "Step's TTFT over GLM's with 4 sessions (a 1,024-token shared prefix, 256 user and 64 answer tokens a turn, up to 3 turns), at turn 2: 250 ms against 100 ms (Step first); a cold prompt: 500 ms and 500 ms; cached share of the prompts 80% and 80%; 400.0 and 400.0 tok/s in all."
        );
        assert!(sessions_findings(&a, &run(vec![])).is_empty());
    }
}
