//! The measurement plan: which contexts and concurrency levels to run, and
//! which cells are skipped as Over capacity. Pure functions.

use std::collections::BTreeSet;

use crate::model::format::{self, TOKENS_PER_K};
use crate::model::reason::Part;
use crate::model::{CellKey, Phase};

/// Tokens kept free between the largest decode context plus its output and
/// `max_model_len` (1019K and 251K in the reference runs).
pub(crate) const CONTEXT_MARGIN: u64 = 1024;
pub(crate) const SMALLEST_DEFAULT_CONTEXT: u64 = 8 * TOKENS_PER_K;
pub(crate) const DEFAULT_CONCURRENCY: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// Rounds down to a whole number of K.
pub(crate) fn floor_k(tokens: u64) -> u64 {
    tokens / TOKENS_PER_K * TOKENS_PER_K
}

/// The largest decode context that leaves room for the output and a margin.
pub(crate) fn largest_decode_context(max_model_len: u64, max_output: u32) -> u64 {
    floor_k(max_model_len.saturating_sub(u64::from(max_output) + CONTEXT_MARGIN))
}

/// 8K, 16K, 32K ... up to the largest that fits, plus that largest itself.
pub(crate) fn default_contexts(max_model_len: u64, max_output: u32) -> Vec<u64> {
    let largest = largest_decode_context(max_model_len, max_output);
    let mut contexts = Vec::new();
    let mut c = SMALLEST_DEFAULT_CONTEXT;
    while c <= largest {
        contexts.push(c);
        c *= 2;
    }
    if largest >= SMALLEST_DEFAULT_CONTEXT && contexts.last() != Some(&largest) {
        contexts.push(largest);
    }
    contexts
}

/// Prefill contexts: the decode contexts and `max_model_len` rounded down to a K.
pub(crate) fn prefill_contexts(decode_contexts: &[u64], max_model_len: u64) -> Vec<u64> {
    let mut v = decode_contexts.to_vec();
    let top = floor_k(max_model_len);
    if top > 0 && !v.contains(&top) {
        v.push(top);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Prompt tokens a request of `context` may carry: at most the context, and
/// never more than the server accepts with `output` tokens after it.
pub(crate) fn prompt_target(context: u64, max_model_len: u64, output: u32) -> u64 {
    context.min(max_model_len.saturating_sub(u64::from(output)))
}

/// The server's KV cache: the tokens requests may use and, where it is
/// paged (vLLM), the page ("block") in tokens: a request takes whole blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvCache {
    pub tokens: u64,
    pub block: Option<u64>,
}

impl KvCache {
    /// A cache of `tokens`, not paged (or paged in pages too small to matter).
    pub fn tokens(tokens: u64) -> KvCache {
        KvCache {
            tokens,
            block: None,
        }
    }
}

/// Why a cell is not run, or `None` if it fits: N x (context + max output),
/// each request rounded up to whole blocks, must fit in the server's KV cache.
pub fn over_capacity(
    context: u64,
    concurrency: u32,
    max_output: u32,
    kv: Option<KvCache>,
) -> Option<Part> {
    let kv = kv?;
    let one = context + u64::from(max_output);
    let held = kv.block.map_or(one, |b| one.div_ceil(b.max(1)) * b.max(1));
    let needed = u64::from(concurrency) * held;
    (needed > kv.tokens).then_some(Part::OverCapacity {
        requests: concurrency,
        context_tokens: context,
        output_tokens: u64::from(max_output),
        block_tokens: kv.block,
        kv_cache_tokens: kv.tokens,
    })
}

/// One decode cell of the plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedDecode {
    pub context: u64,
    pub concurrency: u32,
    /// Set when the cell is skipped as Over capacity.
    pub over_capacity: Option<Part>,
}

/// The cells still to measure at one context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContextWork<'a> {
    pub context: u64,
    /// The prefill cell is still to measure.
    pub prefill: bool,
    /// Decode cells still to measure (or to write as Over capacity).
    pub decode: Vec<&'a PlannedDecode>,
}

impl ContextWork<'_> {
    pub fn cells(&self) -> usize {
        usize::from(self.prefill) + self.decode.len()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub prefill: Vec<u64>,
    pub decode: Vec<PlannedDecode>,
    pub window_s: f64,
    pub max_output: u32,
    /// Windows per decode cell.
    pub repeat: u32,
    /// The server's KV cache, where known.
    pub kv: Option<KvCache>,
}

impl Plan {
    /// This plan with `n` windows per decode cell.
    pub fn repeated(mut self, n: u32) -> Plan {
        self.repeat = n.max(1);
        self
    }

    pub fn new(
        decode_contexts: &[u64],
        prefill: Vec<u64>,
        concurrency: &[u32],
        window_s: f64,
        max_output: u32,
        kv: Option<KvCache>,
    ) -> Plan {
        let decode = decode_contexts
            .iter()
            .flat_map(|&context| {
                concurrency.iter().map(move |&n| PlannedDecode {
                    context,
                    concurrency: n,
                    over_capacity: over_capacity(context, n, max_output, kv),
                })
            })
            .collect();
        Plan {
            prefill,
            decode,
            window_s,
            max_output,
            repeat: 1,
            kv,
        }
    }

    /// Every cell of the plan.
    pub(crate) fn cell_count(&self) -> usize {
        self.prefill.len() + self.decode.len()
    }

    /// The keys of every cell of the plan.
    pub fn keys(&self) -> impl Iterator<Item = CellKey> + '_ {
        let prefill = self.prefill.iter().map(|&c| CellKey {
            phase: Phase::Prefill,
            context_tokens: c,
            concurrency: 1,
        });
        let decode = self.decode.iter().map(|d| CellKey {
            phase: Phase::Decode,
            context_tokens: d.context,
            concurrency: d.concurrency,
        });
        prefill.chain(decode)
    }

    /// Every context of the plan, prefill or decode, ascending.
    pub fn contexts(&self) -> Vec<u64> {
        let all: BTreeSet<u64> = self
            .prefill
            .iter()
            .copied()
            .chain(self.decode.iter().map(|d| d.context))
            .collect();
        all.into_iter().collect()
    }

    /// What is still to measure, context by context in ascending order,
    /// given the cells already `done`; contexts with nothing left are left out.
    pub(crate) fn remaining(&self, done: &BTreeSet<CellKey>) -> Vec<ContextWork<'_>> {
        self.contexts()
            .into_iter()
            .filter_map(|context| {
                let prefill = self.prefill.contains(&context)
                    && !done.contains(&CellKey {
                        phase: Phase::Prefill,
                        context_tokens: context,
                        concurrency: 1,
                    });
                let decode: Vec<&PlannedDecode> = self
                    .decode
                    .iter()
                    .filter(|d| d.context == context)
                    .filter(|d| {
                        !done.contains(&CellKey {
                            phase: Phase::Decode,
                            context_tokens: context,
                            concurrency: d.concurrency,
                        })
                    })
                    .collect();
                (prefill || !decode.is_empty()).then_some(ContextWork {
                    context,
                    prefill,
                    decode,
                })
            })
            .collect()
    }

    /// The most streams run at `context`: how many prompts to build and warm.
    pub(crate) fn streams_at(&self, context: u64) -> u32 {
        self.decode
            .iter()
            .filter(|d| d.context == context && d.over_capacity.is_none())
            .map(|d| d.concurrency)
            .max()
            .unwrap_or(0)
    }

    /// Seconds `work` is expected to take: its decode windows (not the
    /// cells skipped as over capacity) and sending its prompts once, at
    /// `prefill_tok_per_s`.
    pub(crate) fn seconds_of(&self, work: &[ContextWork<'_>], prefill_tok_per_s: f64) -> f64 {
        work.iter()
            .map(|w| {
                let windows = w
                    .decode
                    .iter()
                    .filter(|d| d.over_capacity.is_none())
                    .count();
                self.decode_seconds(windows) + self.prompt_seconds(w, prefill_tok_per_s)
            })
            .sum()
    }

    /// Seconds of `windows` decode cells, each measured `repeat` times.
    pub(crate) fn decode_seconds(&self, windows: usize) -> f64 {
        windows as f64 * self.window_s * f64::from(self.repeat.max(1))
    }

    /// Seconds to send a context's prompts once: one per stream when it has
    /// decode cells to measure, else the prefill's one.
    fn prompt_seconds(&self, w: &ContextWork<'_>, prefill_tok_per_s: f64) -> f64 {
        let streams = if w.decode.is_empty() {
            1
        } else {
            self.streams_at(w.context).max(1)
        };
        w.context as f64 * f64::from(streams) / prefill_tok_per_s.max(1.0)
    }

    /// Seconds the whole plan is expected to take.
    pub(crate) fn estimated_seconds(&self, prefill_tok_per_s: f64) -> f64 {
        self.seconds_of(&self.remaining(&BTreeSet::new()), prefill_tok_per_s)
    }
}

/// Parses "2K,8K,32K" or "3000,8K" into token counts.
pub(crate) fn parse_contexts(text: &str) -> Result<Vec<u64>, String> {
    let mut v = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let tokens = format::parse_context_label(part)
            .or_else(|_| part.parse::<u64>().map_err(|_| ()))
            .map_err(|_| {
                format!("expected context lengths like 2K,8K,32K or 3000, found {part:?}")
            })?;
        if tokens == 0 {
            return Err("a context length must be at least 1 token".into());
        }
        v.push(tokens);
    }
    if v.is_empty() {
        return Err("expected at least one context length".into());
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Parses "1,4,16" into concurrency levels.
pub(crate) fn parse_concurrency(text: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<u32>() {
            Ok(n) if n >= 1 => v.push(n),
            _ => {
                return Err(format!(
                    "expected concurrency levels like 1,4,16, found {part:?}"
                ));
            }
        }
    }
    if v.is_empty() {
        return Err("expected at least one concurrency level".into());
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_remains_is_the_plan_less_the_cells_done() {
        // 8K and 16K decode at 1 and 4 (16K x 4 over capacity), prefill at 8K, 16K, 32K.
        let plan = Plan::new(
            &[8192, 16_384],
            vec![8192, 16_384, 32_768],
            &[1, 4],
            30.0,
            1000,
            Some(KvCache::tokens(60_000)),
        );
        assert_eq!(plan.cell_count(), 7);
        assert_eq!(plan.contexts(), [8192, 16_384, 32_768]);
        let all = plan.remaining(&BTreeSet::new());
        assert_eq!(all.iter().map(ContextWork::cells).sum::<usize>(), 7);
        assert!(all[1].decode[1].over_capacity.is_some());

        let key = |phase, context_tokens, concurrency| CellKey {
            phase,
            context_tokens,
            concurrency,
        };
        let done = BTreeSet::from([
            key(Phase::Prefill, 8192, 1),
            key(Phase::Decode, 8192, 1),
            key(Phase::Decode, 8192, 4),
            key(Phase::Decode, 16_384, 4),
            key(Phase::Prefill, 32_768, 1),
        ]);
        let left = plan.remaining(&done);
        // 8K and 32K are finished; at 16K the prefill and decode x 1 remain.
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].context, 16_384);
        assert!(left[0].prefill);
        assert_eq!(
            left[0]
                .decode
                .iter()
                .map(|d| d.concurrency)
                .collect::<Vec<_>>(),
            [1]
        );
        // A cell that is not in the plan does not count as done work.
        let stray = BTreeSet::from([key(Phase::Decode, 8192, 2)]);
        assert_eq!(plan.remaining(&stray).len(), 3);
    }

    const K: u64 = TOKENS_PER_K;

    #[test]
    fn default_contexts_reproduce_the_reference_plans() {
        // GLM: max_model_len 1,048,576 -> 8K..512K and 1019K; prefill adds 1024K.
        let glm = default_contexts(1_048_576, 4096);
        assert_eq!(
            glm,
            [
                8 * K,
                16 * K,
                32 * K,
                64 * K,
                128 * K,
                256 * K,
                512 * K,
                1019 * K
            ]
        );
        assert_eq!(prefill_contexts(&glm, 1_048_576).last(), Some(&(1024 * K)));
        assert_eq!(prefill_contexts(&glm, 1_048_576).len(), 9);
        // Step: 262,144 -> 8K..128K and 251K; prefill adds 256K.
        let step = default_contexts(262_144, 4096);
        assert_eq!(step, [8 * K, 16 * K, 32 * K, 64 * K, 128 * K, 251 * K]);
        assert_eq!(
            prefill_contexts(&step, 262_144),
            [8 * K, 16 * K, 32 * K, 64 * K, 128 * K, 251 * K, 256 * K]
        );
    }

    #[test]
    fn a_small_server_gets_no_default_context_below_8k() {
        assert!(default_contexts(4096, 512).is_empty());
        assert_eq!(default_contexts(16 * K, 1024), [8 * K, 14 * K]);
        assert_eq!(prompt_target(1024 * K, 1_048_576, 1), 1_048_575);
        assert_eq!(prompt_target(8 * K, 1_048_576, 1), 8 * K);
    }

    #[test]
    fn over_capacity_matches_the_glm_reference() {
        // The GLM cells that ran and did not run bracket a KV cache of ~2.4M tokens.
        let cap = Some(KvCache::tokens(2_400_000));
        let oc = |ctx_k: u64, n: u32| over_capacity(ctx_k * K, n, 4096, cap).is_some();
        assert!(!oc(8, 128) && !oc(32, 64) && !oc(64, 32) && !oc(256, 8) && !oc(1019, 2));
        assert!(oc(16, 128) && oc(64, 64) && oc(128, 32) && oc(512, 8) && oc(1019, 4));
        let why = over_capacity(16 * K, 128, 4096, cap).unwrap().words();
        assert_eq!(
            why,
            "128 requests × (16,384 context + 4,096 output) = 2,621,440 tokens exceed the KV cache of 2,400,000 tokens"
        );
        assert_eq!(over_capacity(1 << 30, 128, 4096, None), None);
    }

    #[test]
    fn the_plan_counts_streams_and_time() {
        let plan = Plan::new(
            &[2 * K, 8 * K],
            vec![2 * K, 8 * K],
            &[1, 4, 16],
            10.0,
            100,
            Some(KvCache::tokens(40_000)),
        );
        assert_eq!(plan.decode.len(), 6);
        assert_eq!(plan.streams_at(2 * K), 16);
        assert_eq!(plan.streams_at(8 * K), 4); // 16 x 8,292 > 40,000
        // 5 windows of 10 s, and (16 x 2K + 4 x 8K) prompt tokens at 1,000 tok/s.
        assert!((plan.estimated_seconds(1000.0) - (50.0 + 65.536)).abs() < 1e-9);
        // Resumed with 2K done: what is left is 8K's prefill, its 4 streams'
        // prompts and its two windows (the third is over capacity).
        let done: BTreeSet<CellKey> = plan.keys().filter(|k| k.context_tokens == 2 * K).collect();
        let left = plan.remaining(&done);
        assert!((plan.seconds_of(&left, 1000.0) - (20.0 + 32.768)).abs() < 1e-9);
        assert_eq!(
            plan.seconds_of(&plan.remaining(&plan.keys().collect()), 1000.0),
            0.0
        );
    }

    #[test]
    fn lists_parse() {
        assert_eq!(parse_contexts("8K, 2K,3000").unwrap(), [2 * K, 3000, 8 * K]);
        assert!(parse_contexts("8KB").is_err());
        assert!(parse_contexts("0").is_err());
        assert_eq!(parse_concurrency("16,1,4,4").unwrap(), [1, 4, 16]);
        assert!(parse_concurrency("0").is_err());
        assert!(parse_concurrency("").is_err());
    }

    /// vLLM pages its cache: a request of 448 tokens takes 4 blocks of 128
    /// (512 tokens), so 4 of them need 2,048 tokens, more than the 1,920 a
    /// cache of 16 blocks offers (one is vLLM's own), though 4 x 448 fits.
    #[test]
    fn a_paged_cache_is_taken_in_whole_blocks() {
        let kv = Some(KvCache {
            tokens: 15 * 128,
            block: Some(128),
        });
        assert_eq!(over_capacity(384, 3, 64, kv), None);
        assert_eq!(
            over_capacity(384, 4, 64, kv).map(|p| p.words()).as_deref(),
            Some(
                "4 requests × (384 context + 64 output, 512 in whole blocks of 128) = 2,048 tokens exceed the KV cache of 1,920 tokens"
            )
        );
        assert_eq!(
            over_capacity(384, 4, 64, Some(KvCache::tokens(15 * 128))),
            None
        );
        // A request that fills its blocks exactly says nothing of blocks.
        assert_eq!(
            over_capacity(448, 5, 64, kv).map(|p| p.words()).as_deref(),
            Some(
                "5 requests × (448 context + 64 output) = 2,560 tokens exceed the KV cache of 1,920 tokens"
            )
        );
    }
}
