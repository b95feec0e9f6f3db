//! Labels and sentences made from a run's data: titles, the Hardware,
//! Engine and Run cards, legends. (Status words live with [`Status`]; the measurement table's
//! cells in [`crate::model::table`].)
//!
//! Pure functions over [`crate::model`] types, shared by the renderer (which
//! shows them) and the page ingester (which checks a page against them).

use crate::model::format;
use crate::model::{
    BenchmarkTool, DecodeTest, Engine, Hardware, PrefillMode, Run, RunMeta, Status,
};

/// The legend sentences for exactly the statuses present among `statuses`, in
/// a fixed order.
pub(crate) fn legend_sentences(statuses: impl IntoIterator<Item = Status>) -> Vec<&'static str> {
    legend_entries(statuses)
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

/// Each status present that has a legend sentence, with it, in a fixed order.
pub(crate) fn legend_entries(
    statuses: impl IntoIterator<Item = Status>,
) -> Vec<(Status, &'static str)> {
    let present: Vec<Status> = statuses.into_iter().collect();
    Status::ALL
        .into_iter()
        .filter(|s| present.contains(s))
        .filter_map(|s| Some((s, s.legend()?)))
        .collect()
}

pub const TTFT_NOTE: &str = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill.";
/// The legend of the pause mark; the threshold is
/// [`crate::model::LONG_PAUSE_FACTOR`] and [`crate::model::LONG_PAUSE_MIN_MS`].
/// Said above a table wider than the screen (site.js shows it only then).
pub(crate) const SCROLL_HINT: &str = "Scroll sideways for every column →";
pub(crate) const PAUSE_LEGEND: &str = "Paused: a request of that cell received nothing for that long at once (at least 10× the cell's median time between tokens and 250 ms), a stall that per-token figures average away; the table's Longest pause column gives it for every cell.";
pub(crate) const TABLE_NOTE: &str =
    "Latencies are medians. Total tok/s is output across all simultaneous requests.";
pub(crate) const PREFILL_CAPTION: &str = "prompt tok/s by context length";
pub(crate) const DECODE_CAPTION: &str =
    "total tok/s · rows are context length, columns are simultaneous requests";

pub(crate) fn decode_test_label(t: DecodeTest) -> &'static str {
    match t {
        DecodeTest::FixedDuration => "Fixed duration",
        DecodeTest::RequestBurst => "Request burst",
        DecodeTest::FixedTokens => "Fixed tokens (one sequence)",
        DecodeTest::None => "None (prefill only)",
    }
}

pub(crate) fn parse_decode_test_label(text: &str) -> Option<DecodeTest> {
    [
        DecodeTest::FixedDuration,
        DecodeTest::RequestBurst,
        DecodeTest::FixedTokens,
        DecodeTest::None,
    ]
    .into_iter()
    .find(|t| decode_test_label(*t) == text)
}

pub(crate) fn prefill_mode_label(m: PrefillMode) -> &'static str {
    match m {
        PrefillMode::DecodeWarmup => "Measured during decode warm-up",
        PrefillMode::Standalone => "Measured on its own, cold",
    }
}

pub(crate) fn parse_prefill_mode_label(text: &str) -> Option<PrefillMode> {
    [PrefillMode::DecodeWarmup, PrefillMode::Standalone]
        .into_iter()
        .find(|m| prefill_mode_label(*m) == text)
}

/// "llm-inference-bench v0.6.2".
pub(crate) fn benchmark_tool_label(tool: &BenchmarkTool) -> String {
    match &tool.version {
        Some(v) => format!("{} v{}", tool.name, v),
        None => tool.name.clone(),
    }
}

/// "H200 SXM 141GB ×4": the hardware as the page title names it.
pub(crate) fn hardware_label(hw: &Hardware) -> String {
    match hw.vram_per_gpu_gb {
        Some(gb) => format!("{} {}GB ×{}", hw.gpu, gb, hw.gpu_count),
        None => format!("{} ×{}", hw.gpu, hw.gpu_count),
    }
}

/// Hardware as lists and filters show it, the GPU's name normalised
/// (`gpu_name`): "H200 ×4".
pub(crate) fn hardware_short(hw: &Hardware) -> String {
    format!("{} ×{}", gpu_name(&hw.gpu), hw.gpu_count)
}

/// A GPU as pages list and filter it: "H200 SXM 141GB", "NVIDIA H200 SXM"
/// and "H200" are all "H200". Drops the vendor, the memory size (the card
/// gives it) and SXM, the default form factor; keeps PCIe and NVL, which
/// run at other power limits. The Hardware card keeps the name as given.
pub(crate) fn gpu_name(gpu: &str) -> String {
    let words: Vec<&str> = gpu
        .split_whitespace()
        .enumerate()
        .filter(|(i, w)| {
            let lower = w.to_ascii_lowercase();
            let vendor = *i == 0 && matches!(lower.as_str(), "nvidia" | "amd");
            let memory = lower
                .trim_end_matches("gib")
                .trim_end_matches("gb")
                .parse::<f64>()
                .is_ok()
                && lower.ends_with('b');
            let sxm = lower.starts_with("sxm") && lower[3..].chars().all(|c| c.is_ascii_digit());
            !(vendor || memory || sxm)
        })
        .map(|(_, w)| w)
        .collect();
    if words.is_empty() {
        gpu.trim().to_string()
    } else {
        words.join(" ")
    }
}

/// What tells runs of one model apart, in the order it is tried: engine,
/// quantization, hardware, date, id (the browser's comparison gets these in
/// each run's data.js and picks the same way).
pub(crate) fn name_traits(r: &Run) -> [String; 5] {
    [
        engine_badges(&r.meta.engine).join(" "),
        r.meta.engine.quantization.clone().unwrap_or_default(),
        hardware_label(&r.meta.hardware),
        r.meta
            .measured_at
            .as_deref()
            .map(format::measured_at)
            .unwrap_or_default(),
        r.id.clone(),
    ]
}

/// A name per run that tells it apart from the others: its model, and
/// where runs share a model, the first of engine, quantization, hardware,
/// date or id that differs between all of them: "GLM-5.3-Flash (vllm
/// 0.29.0)".
pub(crate) fn distinct_names(runs: &[&Run]) -> Vec<String> {
    let traits: Vec<[String; 5]> = runs.iter().map(|r| name_traits(r)).collect();
    // Runs by model, once: the trait that tells a model's runs apart is
    // chosen per model, not per run.
    let mut by_model: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, r) in runs.iter().enumerate() {
        by_model.entry(r.meta.model.as_str()).or_default().push(i);
    }
    let mut names: Vec<String> = runs.iter().map(|r| r.meta.model.clone()).collect();
    for same in by_model.values().filter(|same| same.len() >= 2) {
        let tell = (0..5).find(|&t| {
            let values: std::collections::BTreeSet<&String> =
                same.iter().map(|&i| &traits[i][t]).collect();
            values.len() == same.len()
        });
        for &i in same {
            let value = tell.map(|t| traits[i][t].clone()).filter(|v| !v.is_empty());
            let value = value.unwrap_or_else(|| runs[i].id.clone());
            names[i] = format!("{} ({value})", runs[i].meta.model);
        }
    }
    names
}

/// "564 GB (4 × 141 GB)".
pub(crate) fn vram_label(hw: &Hardware) -> Option<String> {
    hw.vram_per_gpu_gb.map(|gb| {
        format!(
            "{} GB ({} × {} GB)",
            format::count(u64::from(gb) * u64::from(hw.gpu_count)),
            hw.gpu_count,
            gb
        )
    })
}

/// "GLM-5.3-Flash on H200 SXM 141GB ×4".
pub(crate) fn run_title(run: &Run) -> String {
    format!(
        "{} on {}",
        run.meta.model,
        hardware_label(&run.meta.hardware)
    )
}

/// The engine badges of the subtitle: ["vllm", "0.29.0", "BF16"].
pub(crate) fn engine_badges(engine: &Engine) -> Vec<String> {
    [
        Some(&engine.name),
        engine.version.as_ref(),
        engine.quantization.as_ref(),
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect()
}

/// "8 contexts (8K–1019K) × 8 concurrency levels (1–128)", or `None` for a
/// run without decode cells.
pub(crate) fn matrix_summary(run: &Run) -> Option<String> {
    let contexts = run.decode_contexts();
    let levels = run.concurrency_levels();
    let (first_ctx, last_ctx) = (contexts.first()?, contexts.last()?);
    let (first_n, last_n) = (levels.first()?, levels.last()?);
    Some(format!(
        "{} context{} ({}) × {} concurrency level{} ({})",
        contexts.len(),
        plural(contexts.len()),
        format::range_label(
            &format::context_label(*first_ctx),
            &format::context_label(*last_ctx)
        ),
        levels.len(),
        plural(levels.len()),
        format::range_label(&first_n.to_string(), &last_n.to_string()),
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// "prefill at 8K, 16K, 32K", or `None` without prefill cells.
pub(crate) fn prefill_summary(run: &Run) -> Option<String> {
    let labels: Vec<String> = run
        .prefill_cells()
        .map(|c| format::context_label(c.context_tokens))
        .collect();
    (!labels.is_empty()).then(|| format!("prefill at {}", labels.join(", ")))
}

/// How the prefills were proven cold, from what each cell recorded of the
/// server's prefix cache: "nothing cached in any of 5 prefills
/// (vllm:prefix_cache_hits_total)", "at most 0.8% of a prompt cached in 5
/// prefills (...)",
/// with how many were measured again and how many were not checked. `None`
/// when no prefill recorded the cache.
pub(crate) fn cold_prefill_summary(run: &Run) -> Option<String> {
    let prefills: Vec<_> = run.prefill_cells().collect();
    let checked: Vec<_> = prefills
        .iter()
        .filter_map(|c| c.prompt_cache.as_ref().map(|check| (c, check)))
        .collect();
    if checked.is_empty() {
        return None;
    }
    let mut counters: Vec<&str> = checked.iter().map(|(_, k)| k.counter.as_str()).collect();
    counters.sort_unstable();
    counters.dedup();
    let most = checked
        .iter()
        .map(|(_, k)| k.cached_tokens as f64 / k.looked_up_tokens.max(1) as f64)
        .fold(0.0, f64::max);
    let n = checked.len();
    let source = counters.join(", ");
    let mut text = if most == 0.0 {
        match n {
            1 => format!("nothing cached in the prefill ({source})"),
            _ => format!("nothing cached in any of {n} prefills ({source})"),
        }
    } else {
        format!(
            "at most {}% of a prompt cached in {} ({source})",
            format::tenths(most * 100.0),
            format::counted(n, "prefill")
        )
    };
    let again = checked.iter().filter(|(_, k)| k.attempts > 1).count();
    if again > 0 {
        text.push_str(&format!(
            "; {again} measured again with a fresh prompt, the first found cached"
        ));
    }
    if prefills.len() > n {
        text.push_str(&format!("; {} not recorded", prefills.len() - n));
    }
    Some(text)
}

/// A card of label/value rows; rows a run lacks are left out.
pub struct Card {
    pub id: &'static str,
    pub name: &'static str,
    pub rows: Vec<(&'static str, String)>,
}

fn card(id: &'static str, name: &'static str, rows: Vec<(&'static str, Option<String>)>) -> Card {
    Card {
        id,
        name,
        rows: rows
            .into_iter()
            .filter_map(|(label, value)| value.map(|v| (label, v)))
            .collect(),
    }
}

/// The Hardware, Engine and Run cards with the reference pages' labels.
pub fn cards(meta: &RunMeta) -> Vec<Card> {
    let hw = &meta.hardware;
    let engine = &meta.engine;
    let run = &meta.run;
    vec![
        card(
            "hardware",
            "Hardware",
            vec![
                ("Type", hw.kind.clone()),
                ("GPU", Some(hw.gpu.clone())),
                ("GPU count", Some(hw.gpu_count.to_string())),
                ("VRAM", vram_label(hw)),
                ("OS", hw.os.clone()),
            ],
        ),
        card(
            "engine",
            "Engine",
            vec![
                ("Engine", Some(engine.name.clone())),
                ("Version", engine.version.clone()),
                ("Quantization", engine.quantization.clone()),
                ("Backend", engine.backend.clone()),
                ("Repository", engine.repository.clone()),
                ("Build", engine.build.clone()),
                ("Commit", engine.commit.clone()),
            ],
        ),
        card(
            "run",
            "Run",
            vec![
                ("Served model", Some(meta.served_model.clone())),
                (
                    "Measured",
                    meta.measured_at.as_deref().map(format::measured_at),
                ),
                ("Revision", run.revision.clone()),
                (
                    "Benchmark tool",
                    run.benchmark_tool.as_ref().map(benchmark_tool_label),
                ),
                (
                    "Decode test",
                    Some(decode_test_label(run.decode_test).into()),
                ),
                (
                    "Prefill mode",
                    run.prefill_mode.map(|m| prefill_mode_label(m).into()),
                ),
                (
                    "Time per measurement",
                    run.seconds_per_measurement.map(format::seconds_setting),
                ),
                ("Endpoint", run.endpoint.map(|e| e.path().to_string())),
                (
                    "Max output",
                    run.max_output_tokens
                        .map(|n| format!("{} tokens", format::count(n.into()))),
                ),
                ("Token count", run.token_count.map(|c| c.label().into())),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legends_follow_the_statuses_present_in_a_fixed_order() {
        let l = legend_sentences([Status::OverCapacity, Status::Valid, Status::RequestsQueued]);
        assert_eq!(l.len(), 2);
        assert!(l[0].starts_with("Requests queued:"));
        assert!(l[1].starts_with("Over capacity:"));
        assert!(legend_sentences([Status::Valid]).is_empty());
        let l = legend_sentences([Status::OverCapacity, Status::Looped]);
        assert!(l[0].starts_with("Looped:"));
    }

    #[test]
    fn status_labels_read_back_and_codes_are_the_data_files_names() {
        for s in Status::ALL {
            assert_eq!(Status::from_label(s.label()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.code());
        }
        assert_eq!(Status::from_label("valid"), None);
    }

    #[test]
    fn hardware_labels() {
        let hw = Hardware {
            kind: None,
            gpu: "H200 SXM".into(),
            gpu_count: 4,
            vram_per_gpu_gb: Some(141),
            os: None,
        };
        assert_eq!(hardware_label(&hw), "H200 SXM 141GB ×4");
        assert_eq!(vram_label(&hw).unwrap(), "564 GB (4 × 141 GB)");
        let cpu = Hardware {
            vram_per_gpu_gb: None,
            gpu: "CPU".into(),
            gpu_count: 1,
            ..hw
        };
        assert_eq!(hardware_label(&cpu), "CPU ×1");
        assert_eq!(vram_label(&cpu), None);
    }

    #[test]
    fn gpu_names_drop_vendor_memory_and_sxm() {
        for (given, shown) in [
            ("H200 SXM 141GB", "H200"),
            ("NVIDIA H200 SXM", "H200"),
            ("H200", "H200"),
            ("H100 PCIe 80GB", "H100 PCIe"),
            ("H100 SXM5", "H100"),
            ("RTX PRO 6000", "RTX PRO 6000"),
            ("MI300X 192 GB", "MI300X 192 GB"),
            ("141GB", "141GB"),
        ] {
            assert_eq!(gpu_name(given), shown, "{given}");
        }
    }

    #[test]
    fn runs_of_one_model_are_told_apart_by_what_differs_first() {
        let run = |id: &str, model: &str, version: &str| -> Run {
            Run::for_test(
                id,
                serde_json::json!({
                    "schema_version": 1, "model": model, "served_model": "m",
                    "hardware": {"gpu": "H200", "gpu_count": 4},
                    "engine": {"name": "vllm", "version": version},
                    "run": {"decode_test": "fixed_duration"}
                }),
            )
        };
        let (a, b, c, d) = (
            run("a", "GLM", "0.28.0"),
            run("b", "Step", "0.29.0"),
            run("c", "GLM", "0.29.0"),
            run("d", "GLM", "0.29.0"),
        );
        // Versions tell a from c only; with d the same as c, the ids do.
        assert_eq!(
            distinct_names(&[&a, &b, &c]),
            ["GLM (vllm 0.28.0)", "Step", "GLM (vllm 0.29.0)"]
        );
        assert_eq!(
            distinct_names(&[&a, &b, &c, &d]),
            ["GLM (a)", "Step", "GLM (c)", "GLM (d)"]
        );
    }

    /// The Run card's line read back against the cells it summarises:
    /// nothing cached only when no check found a token; the largest share
    /// when one did; retries and unchecked prefills counted.
    #[test]
    fn the_cold_prefill_line_is_true_of_every_prefill() {
        use crate::model::{Cell, PrefillCell, PromptCacheCheck};
        let prefill = |ctx: u64, cache: Option<(u64, u32)>| {
            Cell::Prefill(PrefillCell {
                context_tokens: ctx,
                status: Status::Valid,
                reason: None,
                prompt_tokens: Some(ctx),
                prompt_tokens_from: None,
                prompt_tok_per_s: Some(1000.0),
                ttft_ms: Some(ctx as f64),
                prompt_cache: cache.map(|(cached, attempts)| PromptCacheCheck {
                    cached_tokens: cached,
                    looked_up_tokens: ctx,
                    counter: "vllm:prefix_cache_hits_total".into(),
                    attempts,
                }),
                measured_by: None,
            })
        };
        let run = |cells: Vec<Cell>| {
            let mut r = Run::for_test(
                "r",
                serde_json::json!({
                    "schema_version": 1, "model": "m", "served_model": "m",
                    "hardware": {"gpu": "H200", "gpu_count": 1},
                    "engine": {"name": "vllm"}, "run": {"decode_test": "fixed_duration"}
                }),
            );
            r.cells = cells;
            r
        };
        assert_eq!(cold_prefill_summary(&run(vec![prefill(8192, None)])), None);
        assert_eq!(
            cold_prefill_summary(&run(vec![prefill(8192, Some((0, 1)))])).as_deref(),
            Some("nothing cached in the prefill (vllm:prefix_cache_hits_total)")
        );
        assert_eq!(
            cold_prefill_summary(&run(vec![
                prefill(8192, Some((0, 1))),
                prefill(16_384, Some((0, 2))),
                prefill(32_768, None),
            ]))
            .as_deref(),
            Some(
                "nothing cached in any of 2 prefills (vllm:prefix_cache_hits_total); 1 measured again with a fresh prompt, the first found cached; 1 not recorded"
            )
        );
        // One block of 128 in 16K: 0.8%, not "nothing", not rounded to 1%.
        assert_eq!(
            cold_prefill_summary(&run(vec![
                prefill(8192, Some((0, 1))),
                prefill(16_384, Some((128, 1))),
            ]))
            .as_deref(),
            Some("at most 0.8% of a prompt cached in 2 prefills (vllm:prefix_cache_hits_total)")
        );
    }
}
