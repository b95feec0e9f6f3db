//! Comparisons between runs: which sets get a page ([`plan`]), and the
//! numbers a comparison shows, by concept: one cell against another
//! ([`ratio`]), the grid of cells runs share ([`grid`]), what a comparison
//! finds ([`findings`]), a run's frontiers ([`frontier`]), its setup and
//! figures in a table ([`setup`]), cost ([`cost`]) and capacity within a
//! latency budget ([`capacity`]). Pure, no I/O.

pub mod capacity;
pub mod cost;
pub mod findings;
pub mod frontier;
pub mod grid;
pub mod paced;
pub mod plan;
pub mod ratio;
pub mod sessions;
pub mod setup;

#[cfg(test)]
pub(crate) mod tests {
    use super::{findings::*, frontier::*, grid::*, plan::*, ratio::*};
    use crate::model::figure::Figure;
    use crate::model::{ComparisonsFile, DecodeCell, Run, Status};

    fn cell(status: Status, total: Option<f64>) -> DecodeCell {
        DecodeCell {
            total_tok_per_s: total,
            ..DecodeCell::without_figures(8192, 1, status, None)
        }
    }

    #[test]
    fn ratios_and_the_reasons_when_there_is_none() {
        let names = ("GLM", "Step");
        let why = |a: Option<&DecodeCell>, b: Option<&DecodeCell>| {
            crate::render::compare_words::no_ratio(
                ratio(Figure::Throughput, a, b).unwrap_err(),
                names,
            )
        };
        let a = cell(Status::Valid, Some(200.0));
        let b = cell(Status::Valid, Some(150.0));
        assert_eq!(ratio(Figure::Throughput, Some(&a), Some(&b)), Ok(0.75));
        let over = cell(Status::OverCapacity, None);
        let queued = cell(Status::RequestsQueued, Some(99.0));
        assert_eq!(why(Some(&over), Some(&b)), "GLM over capacity");
        assert_eq!(why(Some(&a), Some(&queued)), "Step queued");
        assert_eq!(why(Some(&over), Some(&over)), "both over capacity");
        assert_eq!(why(None, Some(&b)), "GLM not measured");
        assert_eq!(
            why(Some(&queued), Some(&cell(Status::Looped, None))),
            "GLM queued, Step looped"
        );
        assert_eq!(
            ratio(
                Figure::Throughput,
                Some(&cell(Status::Valid, Some(0.0))),
                Some(&b)
            ),
            Err(NoRatio::ZeroBase)
        );
        assert_eq!(
            why(Some(&cell(Status::Valid, Some(0.0))), Some(&b)),
            "GLM measured 0 tok/s"
        );
    }

    fn run(id: &str, gpu: &str) -> Run {
        Run::for_test(
            id,
            serde_json::json!({
                "schema_version": 1, "model": id.to_uppercase(), "served_model": id,
                "hardware": {"gpu": gpu, "gpu_count": 4}, "engine": {"name": "vllm"},
                "run": {"decode_test": "fixed_duration", "prefill_mode": "decode_warmup",
                        "seconds_per_measurement": 30, "max_output_tokens": 4096}
            }),
        )
    }

    pub(crate) fn with_cells(id: &str, cells: &[(u64, u32, Status, f64)]) -> Run {
        let mut r = run(id, "H200");
        r.cells = cells
            .iter()
            .map(|&(ctx, n, status, total)| {
                crate::model::Cell::Decode(DecodeCell {
                    total_tok_per_s: Some(total),
                    per_request_tok_per_s: Some(total / f64::from(n)),
                    ..DecodeCell::without_figures(ctx, n, status, None)
                })
            })
            .collect();
        r
    }

    #[test]
    fn cells_and_points_a_comparison_draws() {
        use Status::*;
        let a = with_cells(
            "a",
            &[
                (8192, 1, Valid, 100.0),
                (8192, 4, Valid, 300.0),
                (65536, 1, Looped, 90.0),
            ],
        );
        let b = with_cells(
            "b",
            &[
                (8192, 1, Valid, 80.0),
                (8192, 2, RequestsQueued, 150.0),
                (32768, 1, Valid, 70.0),
            ],
        );
        // Only 8K was measured by both runs.
        let shared = shared_context_groups(&[&a, &b]);
        assert_eq!(shared, [ContextGroup(vec![Some(8192), Some(8192)])]);
        assert_eq!(levels_in(&[&a, &b], &shared[0]), [1, 2, 4]);
        // Queued and looped cells are not drawn as valid throughput.
        assert_eq!(valid_totals_at(&a, 8192), [(1.0, 100.0), (4.0, 300.0)]);
        assert_eq!(valid_totals_at(&b, 8192), [(1.0, 80.0)]);
        assert_eq!(
            union_grid(&a, &b),
            (vec![8192, 32768, 65536], vec![1, 2, 4])
        );
        let points = interactivity_points(&a);
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].per_request_tok_per_s, 75.0);
        assert_eq!(points[1].concurrency, 4);
        assert_eq!(largest_valid_context(&a), Some(8192));
        assert_eq!(largest_valid_context(&b), Some(32768));
    }

    fn spec(title: &str, runs: &[&str]) -> crate::model::ComparisonSpec {
        crate::model::ComparisonSpec {
            title: title.into(),
            runs: runs.iter().map(|r| r.to_string()).collect(),
            note: None,
        }
    }

    /// A run on `gpu` with one Valid decode cell (8K × 1), so it compares.
    fn measured(id: &str, gpu: &str) -> Run {
        let mut r = with_cells(id, &[(8192, 1, Status::Valid, 100.0)]);
        r.meta.hardware.gpu = gpu.into();
        r
    }

    #[test]
    fn pairs_on_the_same_hardware_are_added_without_repeating_named_sets() {
        let runs = [
            measured("a", "H200"),
            measured("b", "H200"),
            measured("c", "H200"),
            measured("d", "B200"),
        ];
        let file = ComparisonsFile {
            comparisons: vec![spec("A and B", &["b", "a"])],
            auto_pair_limit: None,
        };
        let plan = plan(&runs, &file).unwrap();
        let ids: Vec<&str> = plan.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a--c", "b--a", "b--c"]);
        assert_eq!(plan[1].title, "A and B");
        assert_eq!(plan[1].runs, [1, 0], "the named order sets the baseline");
        assert_eq!(plan[0].title, "A vs C");
    }

    #[test]
    fn hardware_with_more_runs_than_the_limit_gets_no_automatic_pairs() {
        let runs: Vec<Run> = (0..7).map(|i| measured(&format!("r{i}"), "H200")).collect();
        let file = ComparisonsFile::default();
        assert!(plan(&runs, &file).unwrap().is_empty());
        let six = &runs[..6];
        assert_eq!(plan(six, &file).unwrap().len(), 15);
        let limited = ComparisonsFile {
            comparisons: vec![],
            auto_pair_limit: Some(2),
        };
        assert!(plan(six, &limited).unwrap().is_empty());
    }

    #[test]
    fn automatic_pairs_need_a_shared_valid_cell_and_two_setups() {
        use Status::*;
        // Decode at different contexts, no prefill: nothing to set side by side.
        let x16 = with_cells("x16", &[(2048, 16, Valid, 900.0)]);
        let x1 = with_cells("x1", &[(512, 1, Valid, 80.0)]);
        // One setup measured twice: its series compares them.
        let night1 = with_cells("night1", &[(8192, 1, Valid, 100.0)]);
        let mut night2 = with_cells("night2", &[(8192, 1, Valid, 101.0)]);
        night2.meta.model = night1.meta.model.clone();
        // Only prefill in common still compares.
        let mut prefill_a = with_cells("pa", &[]);
        let mut prefill_b = with_cells("pb", &[(8192, 4, OverCapacity, 0.0)]);
        for r in [&mut prefill_a, &mut prefill_b] {
            r.cells
                .push(crate::model::Cell::Prefill(crate::model::PrefillCell {
                    context_tokens: 8192,
                    status: Valid,
                    reason: None,
                    prompt_tokens: Some(8192),
                    prompt_tokens_from: None,
                    prompt_tok_per_s: Some(10_000.0),
                    ttft_ms: Some(819.2),
                    prompt_cache: None,
                    measured_by: None,
                }));
        }
        let ids = |runs: &[Run]| -> Vec<String> {
            plan(runs, &ComparisonsFile::default())
                .unwrap()
                .into_iter()
                .map(|c| c.id)
                .collect()
        };
        assert!(ids(&[x16.clone(), x1.clone()]).is_empty());
        assert!(ids(&[night1.clone(), night2.clone()]).is_empty());
        assert_eq!(ids(&[prefill_a, prefill_b]), ["pa--pb"]);
        // Named, they are always built.
        let named = ComparisonsFile {
            comparisons: vec![spec("asked for", &["x16", "x1"])],
            auto_pair_limit: None,
        };
        assert_eq!(plan(&[x16, x1], &named).unwrap().len(), 1);
    }

    #[test]
    fn named_sets_must_name_existing_distinct_runs() {
        let runs = [run("a", "H200"), run("b", "H200")];
        let bad = ComparisonsFile {
            comparisons: vec![spec("x", &["a", "a"])],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "comparison 1 (\"x\"): expected 2 to 6 different runs, found 1"
        );
        let bad = ComparisonsFile {
            comparisons: vec![spec("x", &["a", "zz"])],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "comparison 1 (\"x\"): run \"zz\" is not in the data folder (runs: a, b)"
        );
    }

    #[test]
    fn two_sets_of_the_same_runs_are_an_error_naming_both_and_all_errors_are_listed() {
        let runs = [run("a", "H200"), run("b", "H200"), run("c", "H200")];
        let bad = ComparisonsFile {
            comparisons: vec![
                spec("A vs B", &["a", "b"]),
                spec("no such", &["a", "nope"]),
                spec("B vs A", &["b", "a"]),
            ],
            auto_pair_limit: None,
        };
        assert_eq!(
            plan(&runs, &bad).unwrap_err().to_string(),
            "2 problems:\n  - comparison 2 (\"no such\"): run \"nope\" is not in the data folder (runs: a, b, c)\n  - comparisons 1 (\"A vs B\") and 3 (\"B vs A\") list the same runs (b, a): keep one"
        );
    }

    #[test]
    fn runs_of_unknown_hardware_are_not_paired_and_are_warned_about() {
        let mut remote = run("remote", "unknown");
        remote.meta.hardware.gpu_count = 1;
        let mut other = run("other", "unknown");
        other.meta.hardware.gpu_count = 1;
        let mut no_engine = run("no-engine", "H200");
        no_engine.meta.engine.name = "unknown".into();
        let runs = [remote, other, no_engine, run("known", "H200")];
        assert!(plan(&runs, &ComparisonsFile::default()).unwrap().is_empty());
        assert_eq!(
            unpaired_warnings(&runs),
            [
                "run remote: not compared automatically: its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)",
                "run other: not compared automatically: its GPU is unknown: pass --gpu and --gpu-count to sitegen run, or set hardware.gpu and hardware.gpu_count in run.json (or with --meta)",
                "run no-engine: not compared automatically: its engine is unknown: pass --engine to sitegen run, or set engine.name in run.json (or with --meta)",
            ]
        );
    }

    #[test]
    fn per_gpu_figures_and_ratios_divide_by_each_run_s_gpu_count() {
        let mut four = run("four", "H200 SXM");
        four.meta.hardware.gpu_count = 4;
        let mut one = run("one", "RTX PRO 6000");
        one.meta.hardware.gpu_count = 1;
        assert_eq!(Basis::Total.of(&four, 1000.0), 1000.0);
        assert_eq!(Basis::PerGpu.of(&four, 1000.0), 250.0);
        assert_eq!(Basis::PerGpu.of(&one, 400.0), 400.0);
        // one makes 400 tok/s, four 1000: 0.4x in total, 1.6x per GPU.
        assert_eq!(Basis::Total.ratio(&four, &one, 0.4), 0.4);
        assert!((Basis::PerGpu.ratio(&four, &one, 0.4) - 1.6).abs() < 1e-12);
        assert!((Basis::PerGpu.ratio(&one, &four, 2.5) - 0.625).abs() < 1e-12);
    }

    #[test]
    fn contexts_within_two_percent_pair_and_the_rest_stand_alone() {
        let (k256, k251, k1024, k1019) = (262_144, 257_024, 1_048_576, 1_043_456);
        let pairs = pair_contexts(&[8192, k256, 524_288, k1019], &[8192, k251, k1024]);
        let shown: Vec<String> = pairs.iter().map(|p| p.label()).collect();
        assert_eq!(shown, ["8K", "256K / 251K", "512K", "1019K / 1024K"]);
        assert!(pairs[1].near() && !pairs[0].near());
        // 4% apart: not the same context.
        let apart = pair_contexts(&[100_000], &[96_000]);
        assert_eq!(apart.len(), 2);
        // Equal contexts win over near ones.
        let equal = pair_contexts(&[k256], &[k251, k256]);
        assert_eq!(
            equal[1],
            ContextPair {
                a: Some(k256),
                b: Some(k256)
            }
        );
    }

    #[test]
    fn ratio_summaries_count_what_the_page_would_call_a_tie_as_neither() {
        let s = RatioSummary::of([0.8, 1.2, 0.999, 0.9]).unwrap();
        assert_eq!((s.min, s.max, s.count), (0.8, 1.2, 4));
        assert!((s.median - 0.9495).abs() < 1e-12);
        assert_eq!((s.above, s.below), (1, 2), "0.999 shows as 1.00×");
        assert_eq!(RatioSummary::of([]), None);
    }

    #[test]
    fn findings_pair_near_contexts_and_count_what_is_not_compared() {
        use Status::*;
        let a = with_cells(
            "a",
            &[
                (8192, 1, Valid, 100.0),
                (262_144, 1, Valid, 50.0),
                (8192, 2, OverCapacity, 0.0),
            ],
        );
        let b = with_cells(
            "b",
            &[
                (8192, 1, Valid, 80.0),
                (257_024, 1, Valid, 60.0),
                (8192, 4, Valid, 10.0),
            ],
        );
        let f = pair_findings(&a, &b, Basis::Total);
        let d = f.decode.unwrap();
        assert_eq!((d.count, d.above, d.below), (2, 1, 1));
        assert_eq!(
            f.decode_by_context,
            [("8K".to_string(), 0.8), ("256K / 251K".to_string(), 1.2)]
        );
        // 8K×2: a over capacity, b not measured; 8K×4 and 256K×2, ×4: one side only.
        assert_eq!((f.one_side_only, f.not_valid), (4, 0));
        assert_eq!(reach(&a).most_requests, Some((1, 262_144)));
    }

    #[test]
    fn pareto_frontier_keeps_only_undominated_points() {
        let points = [
            (10.0, 100.0),
            (5.0, 300.0),
            (8.0, 90.0),
            (2.0, 300.0),
            (1.0, 400.0),
        ];
        assert_eq!(pareto_frontier(&points), vec![4, 1, 0]);
        assert_eq!(pareto_frontier(&[]), Vec::<usize>::new());
    }
}
