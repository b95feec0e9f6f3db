//! Sessions: what agents and chats do to a server, turn after turn on a
//! growing context.
//!
//! Every session starts from the same shared prefix (a system prompt and
//! tools); each turn sends the whole history so far plus new user tokens,
//! and the answer joins the history. `S` sessions are kept running for a
//! fixed window, a finished session replaced at once. A sessions window
//! answers the question between the matrix's two: at turn k of a session
//! whose context has reached C tokens, with S sessions running, how long
//! until the first token, how much of the prompt the cache spared, and how
//! fast the answers come. Its own record (`data/<run>/sessions/*.json`),
//! never a cell of the matrix. docs/measurement.md, "Sessions", defines
//! every figure.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{MeasuredBy, Status, reason, slo};

/// What every session of a window does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionWorkload {
    /// Tokens every session shares at its start (system prompt, tools).
    pub shared_prefix_tokens: u64,
    /// New user tokens each turn appends after the previous answer.
    pub user_tokens_per_turn: u64,
    /// Output tokens of each answer.
    pub answer_tokens: u64,
    /// Turns of a session, the deepest measured or found over capacity.
    pub turns: u32,
    /// Wait between an answer and the next turn, in milliseconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_time_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl SessionWorkload {
    /// The prompt tokens turn `turn` (from 1) sends as planned: the shared
    /// prefix, `turn` user parts and the `turn - 1` answers before it.
    pub fn planned_context(&self, turn: u32) -> u64 {
        let k = u64::from(turn.max(1));
        self.shared_prefix_tokens + k * self.user_tokens_per_turn + (k - 1) * self.answer_tokens
    }
}

/// One turn depth of a sessions window: the turns that had reached it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionDepth {
    /// The turn, from 1.
    pub turn: u32,
    /// Prompt tokens at this turn: the median the server counted, or as
    /// planned where no turn was measured.
    pub context_tokens: u64,
    pub status: Status,
    /// Why the depth is not Valid (required unless `valid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<reason::Reason>,
    /// Turns at this depth that started inside the window (each was let
    /// finish, so every one is counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u64>,
    /// Time to first token of those turns, percentiles with their count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<slo::Quantiles>,
    /// Prompt tokens of those turns, summed as the server counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Of them, tokens the server said it found in its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`), summed; absent when
    /// the server does not say per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// One session's decode speed: 1000 / median time per output token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_session_tok_per_s: Option<f64>,
    /// TTFT of a cold prompt of this context, measured as a prefill cell
    /// is (proven cold by the server's counters where it has them): what
    /// the turn would cost without the cache. The median of
    /// `cold_prompts` such prompts where that is stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_ttft_ms: Option<f64>,
    /// How many Valid cold prompts `cold_ttft_ms` is the median of; absent
    /// in runs that did not say (before sitegen measured several: one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_prompts: Option<u32>,
}

impl SessionDepth {
    /// A depth with its status and no figures.
    pub fn without_figures(
        turn: u32,
        context_tokens: u64,
        status: Status,
        reason: Option<reason::Reason>,
    ) -> SessionDepth {
        SessionDepth {
            turn,
            context_tokens,
            status,
            reason,
            turns: None,
            ttft_ms: None,
            prompt_tokens: None,
            cached_tokens: None,
            per_session_tok_per_s: None,
            cold_ttft_ms: None,
            cold_prompts: None,
        }
    }

    /// Median TTFT.
    pub fn ttft_median_ms(&self) -> Option<f64> {
        self.ttft_ms.as_ref().and_then(|q| q.p50)
    }

    /// Share of the prompt tokens the server said it had cached.
    pub fn cached_share(&self) -> Option<f64> {
        share(self.cached_tokens?, self.prompt_tokens?)
    }
}

/// `part / whole`, none of nothing.
fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The server's own prefix-cache counters over a window: their growth
/// from before its first request to after its last one ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerCacheCount {
    /// Prompt tokens looked up in the cache.
    pub looked_up_tokens: u64,
    /// Of them, found there.
    pub cached_tokens: u64,
    /// The counter of those found, e.g. `vllm:prefix_cache_hits_total`.
    pub counter: String,
}

impl ServerCacheCount {
    pub fn share(&self) -> Option<f64> {
        share(self.cached_tokens, self.looked_up_tokens)
    }
}

/// `S` sessions kept running for a window, and what each turn depth showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionWindow {
    pub workload: SessionWorkload,
    /// Sessions running at once.
    pub sessions: u32,
    /// The window's status: Valid, Requests queued, Looped, Error, or Over
    /// capacity when not even the first turn fits.
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<reason::Reason>,
    /// Length of the window in seconds.
    pub window_s: f64,
    /// When the window began, Unix seconds (`sitegen run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start_unix_s: Option<f64>,
    /// Sessions begun inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_started: Option<u64>,
    /// Sessions whose last turn ended inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_completed: Option<u64>,
    /// Turns started inside the window (all let finish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_started: Option<u64>,
    /// Turns that ended inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_completed: Option<u64>,
    /// Turns that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_turns: Option<u64>,
    /// Output tokens that arrived inside the window / the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tok_per_s: Option<f64>,
    /// Turns completed inside the window / the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_per_s: Option<f64>,
    /// Sessions completed inside the window / the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_per_s: Option<f64>,
    /// Output tokens that arrived inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Median TTFT over every turn started inside the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_median_ms: Option<f64>,
    /// One session's decode speed over every turn: 1000 / median TPOT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_session_tok_per_s: Option<f64>,
    /// Latency percentiles over every turn started inside the window, with
    /// their counts: what a latency budget is judged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Box<slo::Latency>>,
    /// Where the depths' `cached_tokens` come from: the field of each
    /// answer that said it, e.g. `usage.prompt_tokens_details.cached_tokens`
    /// (vLLM with `--enable-prompt-tokens-details`, SGLang) or
    /// `timings.cache_n` (llama.cpp); absent when no answer said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens_from: Option<String>,
    /// The server's prefix-cache counters over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cache: Option<ServerCacheCount>,
    /// Requests the server preempted during the window (its counter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<u64>,
    /// The turn depths measured or found over capacity, in order; a depth
    /// no session reached inside the window is absent.
    pub depths: Vec<SessionDepth>,
    /// The measuring client's own load during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<super::ClientLoad>,
    /// The tool that measured it when not `sitegen run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<MeasuredBy>,
}

/// Identity of a sessions window within its run, and its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey {
    pub shared_prefix_tokens: u64,
    pub user_tokens_per_turn: u64,
    pub answer_tokens: u64,
    pub think_time_ms: u64,
    pub sessions: u32,
}

impl SessionKey {
    /// The canonical file name under `sessions/`.
    pub fn file_name(&self) -> String {
        let think = match self.think_time_ms {
            0 => String::new(),
            ms => format!("-t{ms:06}"),
        };
        format!(
            "sessions-p{:08}-u{:06}-a{:05}{think}-s{:04}.json",
            self.shared_prefix_tokens, self.user_tokens_per_turn, self.answer_tokens, self.sessions
        )
    }
}

impl SessionWindow {
    pub fn key(&self) -> SessionKey {
        SessionKey {
            shared_prefix_tokens: self.workload.shared_prefix_tokens,
            user_tokens_per_turn: self.workload.user_tokens_per_turn,
            answer_tokens: self.workload.answer_tokens,
            think_time_ms: self.workload.think_time_ms,
            sessions: self.sessions,
        }
    }

    /// The same workload: windows of one sweep over S.
    pub fn same_workload(&self, other: &SessionWindow) -> bool {
        let (a, b) = (self.key(), other.key());
        (
            a.shared_prefix_tokens,
            a.user_tokens_per_turn,
            a.answer_tokens,
            a.think_time_ms,
        ) == (
            b.shared_prefix_tokens,
            b.user_tokens_per_turn,
            b.answer_tokens,
            b.think_time_ms,
        )
    }

    /// Share of the prompt tokens found in the cache, from the turns'
    /// own usage where the server said it per request.
    pub fn reported_cached_share(&self) -> Option<f64> {
        let (mut cached, mut prompt, mut any) = (0, 0, false);
        for d in &self.depths {
            if let (Some(c), Some(p)) = (d.cached_tokens, d.prompt_tokens) {
                cached += c;
                prompt += p;
                any = true;
            }
        }
        if !any {
            return None;
        }
        share(cached, prompt)
    }

    /// A window with its status and no figures.
    pub fn without_figures(
        workload: SessionWorkload,
        sessions: u32,
        window_s: f64,
        status: Status,
        reason: Option<reason::Reason>,
    ) -> SessionWindow {
        SessionWindow {
            workload,
            sessions,
            status,
            reason,
            window_s,
            window_start_unix_s: None,
            sessions_started: None,
            sessions_completed: None,
            turns_started: None,
            turns_completed: None,
            failed_turns: None,
            total_tok_per_s: None,
            turns_per_s: None,
            sessions_per_s: None,
            output_tokens: None,
            ttft_median_ms: None,
            per_session_tok_per_s: None,
            latency: None,
            cached_tokens_from: None,
            server_cache: None,
            preemptions: None,
            depths: Vec::new(),
            client: None,
            measured_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(think: u64) -> SessionWorkload {
        SessionWorkload {
            shared_prefix_tokens: 1024,
            user_tokens_per_turn: 128,
            answer_tokens: 64,
            turns: 8,
            think_time_ms: think,
        }
    }

    #[test]
    fn the_planned_context_grows_by_an_answer_and_a_user_part_per_turn() {
        let w = workload(0);
        assert_eq!(w.planned_context(1), 1024 + 128);
        assert_eq!(w.planned_context(2), 1024 + 2 * 128 + 64);
        assert_eq!(w.planned_context(8), 1024 + 8 * 128 + 7 * 64);
    }

    #[test]
    fn file_names_sort_by_workload_then_sessions_and_name_a_think_time() {
        let a = SessionWindow::without_figures(workload(0), 4, 30.0, Status::Valid, None);
        let b = SessionWindow::without_figures(workload(0), 16, 30.0, Status::Valid, None);
        let c = SessionWindow::without_figures(workload(500), 1, 30.0, Status::Valid, None);
        assert_eq!(
            a.key().file_name(),
            "sessions-p00001024-u000128-a00064-s0004.json"
        );
        assert_eq!(
            c.key().file_name(),
            "sessions-p00001024-u000128-a00064-t000500-s0001.json"
        );
        assert!(a.key() < b.key() && b.key() < c.key());
        assert!(a.key().file_name() < b.key().file_name());
        assert!(a.same_workload(&b) && !a.same_workload(&c));
    }

    #[test]
    fn the_reported_share_sums_the_depths_the_server_spoke_of() {
        let mut w = SessionWindow::without_figures(workload(0), 4, 30.0, Status::Valid, None);
        assert_eq!(w.reported_cached_share(), None);
        let mut d1 = SessionDepth::without_figures(1, 1152, Status::Valid, None);
        d1.prompt_tokens = Some(1000);
        d1.cached_tokens = Some(500);
        let mut d2 = SessionDepth::without_figures(2, 1344, Status::Valid, None);
        d2.prompt_tokens = Some(3000);
        d2.cached_tokens = Some(2500);
        let mut d3 = SessionDepth::without_figures(3, 1536, Status::Valid, None);
        d3.prompt_tokens = Some(4000);
        w.depths = vec![d1, d2, d3];
        assert_eq!(w.reported_cached_share(), Some(0.75));
        assert_eq!(w.depths[0].cached_share(), Some(0.5));
        assert_eq!(w.depths[2].cached_share(), None);
    }
}
