//! Why a cell is not Valid: stored as codes with their parameters, worded
//! here when a page or table is built, so a better wording reaches every run
//! measured before it.
//!
//! A reason is a list of [`Part`]s, each a `code` with its parameters, shown
//! joined with "; ". Files written before codes existed hold the reason as
//! English text; it reads as [`Reason::Stated`] and is shown as it was.
//! Words that are not ours (a server's error message, a tool's failure text)
//! are a parameter of their code, kept verbatim.
//!
//! A new reason is a variant of [`Part`] with its words in [`Part::words`].

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::model::format::{count, counted, grouped, millis, millis_tenths, tenths};

/// Why a cell is not Valid (or what a Valid cell should say of itself).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Reason {
    /// Codes with their parameters, worded when shown.
    Coded(Vec<Part>),
    /// English text, shown verbatim: an older file's reason, or one read
    /// back from a table's `reason` column.
    Stated(String),
}

/// One part of a reason: a code and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "code", rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    /// Requests that ended in an error, the first one's message kept.
    RequestsFailed {
        failed: u64,
        /// Requests of the cell, where the source counts them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requests: Option<u64>,
        /// The first failure's message (the server's or the client's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<String>,
        /// The tool's own list of error codes and counts, as it wrote it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_codes: Option<String>,
        /// Failures by kind, as the tool named them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        kinds: Vec<FailedKind>,
    },
    /// No request of the cell succeeded.
    AllRequestsFailed {
        requests: u64,
        /// The file records no prompt length: the cell is filed at context 0.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        no_prompt_length: bool,
    },
    /// No request succeeded, some failed and some were cut off (GuideLLM).
    NoneSucceeded { failed: u64, incomplete: u64 },
    /// Requests the file sent but counts neither completed nor failed.
    RequestsUnaccounted {
        unaccounted: u64,
        requests: u64,
        completed: u64,
        failed: u64,
    },
    /// A request failed; its message is the cell's reason.
    RequestFailed { message: String },
    /// Streams that ended without a finish reason before `max_tokens`.
    CutShort {
        short: u64,
        requests: u64,
        mean_tokens: f64,
        asked_tokens: u64,
    },
    /// Requests the server ended with finish_reason "length" before `max_tokens`.
    Capped {
        short: u64,
        requests: u64,
        mean_tokens: f64,
        asked_tokens: u64,
    },
    /// Requests the server ended at end-of-sequence before `max_tokens`.
    StoppedEarly {
        short: u64,
        requests: u64,
        mean_tokens: f64,
        asked_tokens: u64,
    },
    /// Requests counted as `max_tokens` though they streamed fewer events.
    MergedEvents {
        merged: u64,
        requests: u64,
        mean_fewer: f64,
        asked_tokens: u64,
    },
    /// A stream's output ended in a repeated unit.
    Looped {
        stream: u32,
        period_chars: u32,
        covered_chars: u32,
        /// "reasoning" when the loop is in a chat model's reasoning.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel: Option<String>,
    },
    /// The tool reports that the model repeated itself.
    ToolLooped {
        /// The tool's own words for it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The server's metrics showed requests waiting.
    ServerWaiting,
    /// Fewer requests decoded at once than were kept in flight.
    StreamedAtOnce { peak: u32, concurrency: u32 },
    /// The server ran fewer requests at once than the tool kept in flight.
    RanAtOnce {
        /// The tool's measure of requests running at once, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effective: Option<f64>,
        concurrency: u32,
    },
    /// The server's own limit of running requests is below the burst's.
    ServerLimit {
        limit: u64,
        /// Where the file records the limit.
        key: String,
        in_flight: u32,
    },
    /// Requests sent at once that got their first token only after another
    /// had finished.
    FirstTokenLate {
        late: u64,
        requests: u32,
        first_token_s: f64,
        shortest_s: f64,
    },
    /// The p99 TTFT is longer than the median request's whole latency.
    TtftOverLatency {
        p99_ttft_ms: f64,
        median_latency_ms: f64,
        requests: u32,
    },
    /// Requests preempted during the window, by the server's counter.
    Preempted { requests: u64, series: String },
    /// The server's KV cache was full, by its usage gauge.
    KvCacheFull { series: String, peak_usage: f64 },
    /// The prefix cache held the prompt of every fresh prompt tried.
    NotCold {
        cached_tokens: u64,
        looked_up_tokens: u64,
        prompt_tokens: u64,
        counter: String,
        tries: u32,
    },
    /// The measuring client could not keep up with the streams.
    ClientOverloaded {
        /// How long a ready stream waited for the client, median, ms.
        ready_wait_ms: f64,
        tbt_median_ms: f64,
        /// Worker threads the client ran on.
        threads: u32,
    },
    /// The stream carried no token.
    NoToken,
    /// The stream reported no `usage.prompt_tokens`.
    NoPromptTokens,
    /// The server counted a prompt of other length than the prompt built.
    PromptTokensMismatch { counted: u64, planned: u64 },
    /// N × (context + output) exceeds the server's KV cache.
    OverCapacity {
        requests: u32,
        context_tokens: u64,
        output_tokens: u64,
        /// The cache's block, when it is paged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        block_tokens: Option<u64>,
        kv_cache_tokens: u64,
    },
    /// N × (context + output) exceeds the tool's token budget.
    OverBudget {
        requests: u64,
        context_tokens: u64,
        output_tokens: u64,
        budget_tokens: u64,
    },
    /// The tool reports a failure, in its words when it gives them.
    ToolFailure {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The tool skipped the cell.
    SkippedByTool,
    /// The tool recorded 0 tok/s beside tokens that arrived.
    ZeroRate { tokens: u64 },
    /// GenAI-Perf counted no request.
    NoRequestCounted,
    /// Requests GenAI-Perf did not count, whose time is in its duration.
    RequestsNotCounted { uncounted: u64, requests: u64 },
    /// An Error row of a published page, which shows no reason.
    PageGivesNoReason,
    /// MLPerf LoadGen judged the run INVALID: its own lines, verbatim.
    LoadgenInvalid {
        /// The constraint lines LoadGen answered NO
        /// ("Performance constraints satisfied : NO").
        unmet: Vec<String>,
        /// Its recommendations, each a bullet of its "Recommendations:".
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        recommendations: Vec<String>,
        /// Early stopping results that were unsuccessful, each with its
        /// label ("TTFT Early Stopping Result: Run unsuccessful. ...").
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        early_stopping: Vec<String>,
    },
}

/// Failures of one kind, as a tool counted them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedKind {
    /// The tool's name for the kind (its words).
    pub kind: String,
    pub count: u64,
}

impl Reason {
    /// A reason of one part.
    pub fn of(part: Part) -> Reason {
        Reason::Coded(vec![part])
    }

    /// A reason of `parts`, or none when there are none.
    pub fn of_parts(parts: Vec<Part>) -> Option<Reason> {
        (!parts.is_empty()).then_some(Reason::Coded(parts))
    }

    /// The reason in words, parts joined with "; ".
    pub fn words(&self) -> String {
        match self {
            Reason::Coded(parts) => parts.iter().map(Part::words).collect::<Vec<_>>().join("; "),
            Reason::Stated(text) => text.clone(),
        }
    }

    /// This reason with `part` after it.
    pub fn and(self, part: Part) -> Reason {
        match self {
            Reason::Coded(mut parts) => {
                parts.push(part);
                Reason::Coded(parts)
            }
            Reason::Stated(text) => Reason::Stated(format!("{text}; {}", part.words())),
        }
    }

    /// `first` followed by `then`, either of them absent.
    pub fn join(first: Option<Reason>, then: Option<Reason>) -> Option<Reason> {
        match (first, then) {
            (Some(Reason::Coded(mut a)), Some(Reason::Coded(b))) => {
                a.extend(b);
                Some(Reason::Coded(a))
            }
            (Some(a), Some(b)) => Some(Reason::Stated(format!("{}; {}", a.words(), b.words()))),
            (a, b) => a.or(b),
        }
    }

    /// The failure messages it carries (not our words), to be amended.
    pub fn messages_mut(&mut self) -> impl Iterator<Item = &mut String> {
        let parts = match self {
            Reason::Coded(parts) => parts.as_mut_slice(),
            Reason::Stated(_) => &mut [],
        };
        parts.iter_mut().filter_map(|p| match p {
            Part::RequestsFailed { first, .. } => first.as_mut(),
            Part::RequestFailed { message } => Some(message),
            _ => None,
        })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words())
    }
}

impl From<Part> for Reason {
    fn from(part: Part) -> Reason {
        Reason::of(part)
    }
}

/// A new file's list of codes, or an older file's text.
impl<'de> Deserialize<'de> for Reason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Reason;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of reason codes, or a reason in words")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Reason, E> {
                Ok(Reason::Stated(text.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Reason, A::Error> {
                Vec::<Part>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Reason::Coded)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// What a prefix cache's counters held of a prompt: `cached` of `looked_up`
/// tokens for a prompt of `prompt` tokens, by `counter`. More looked up than
/// the prompt means other requests were counted with it.
pub(crate) fn held_words(cached: u64, looked_up: u64, prompt: u64, counter: &str) -> String {
    if looked_up > prompt {
        format!(
            "the server's prefix cache counted {} tokens found of {} looked up ({counter}) for a prompt of {}: other requests were counted with it",
            count(cached),
            count(looked_up),
            count(prompt)
        )
    } else {
        format!(
            "the server's prefix cache held {} of the {} prompt tokens ({counter})",
            count(cached),
            count(prompt)
        )
    }
}

impl Part {
    /// The part in words.
    pub fn words(&self) -> String {
        match self {
            Part::RequestsFailed {
                failed,
                requests,
                first,
                error_codes,
                kinds,
            } => {
                let mut s = match requests {
                    Some(r) => format!("{failed} of {r} requests failed"),
                    None => format!("{failed} requests failed"),
                };
                if let Some(codes) = error_codes {
                    s.push_str(&format!(" (error codes and counts: {codes})"));
                }
                if !kinds.is_empty() {
                    let kinds: Vec<String> = kinds
                        .iter()
                        .map(|k| format!("{} ×{}", k.kind, k.count))
                        .collect();
                    s.push_str(&format!(" ({})", kinds.join(", ")));
                }
                if let Some(first) = first {
                    s.push_str(&format!("; first: {first}"));
                }
                s
            }
            Part::RequestsUnaccounted {
                unaccounted,
                requests,
                completed,
                failed,
            } => format!(
                "{unaccounted} of {requests} requests neither completed nor failed (the file counts {completed} completed and {failed} failed)"
            ),
            Part::AllRequestsFailed {
                requests,
                no_prompt_length,
            } => format!(
                "all {requests} requests failed{}",
                if *no_prompt_length {
                    " (the file records no prompt length: filed at context 0)"
                } else {
                    ""
                }
            ),
            Part::NoneSucceeded { failed, incomplete } => {
                format!("no request succeeded ({failed} failed, {incomplete} cut off at the end)")
            }
            Part::RequestFailed { message } => message.clone(),
            Part::CutShort {
                short,
                requests,
                mean_tokens,
                asked_tokens,
            } => format!(
                "{short} of {requests} requests were cut short: their streams ended without a finish reason after {} of {asked_tokens} tokens on average (a server that ends a running stream when another request arrives does this, as llama-cpp-python's interrupt_requests does)",
                tenths(*mean_tokens)
            ),
            Part::Capped {
                short,
                requests,
                mean_tokens,
                asked_tokens,
            } => format!(
                "{short} of {requests} requests were capped: the server ended them with finish_reason \"length\" after {} of {asked_tokens} tokens on average (the prompt and max_tokens do not fit its context window)",
                tenths(*mean_tokens)
            ),
            Part::StoppedEarly {
                short,
                requests,
                mean_tokens,
                asked_tokens,
            } => format!(
                "{short} of {requests} requests stopped (finish_reason \"stop\") after {} of {asked_tokens} tokens on average: the server honoured neither ignore_eos nor min_tokens, so those requests were shorter than asked",
                tenths(*mean_tokens)
            ),
            Part::MergedEvents {
                merged,
                requests,
                mean_fewer,
                asked_tokens,
            } => format!(
                "{merged} of {requests} requests streamed fewer events than tokens ({} fewer on average) and ended with finish_reason \"length\": counted as the {asked_tokens} tokens they asked for, which the server generates for the same prompt not streamed (a server that holds back a multi-byte character split across tokens sends two in one event)",
                tenths(*mean_fewer)
            ),
            Part::Looped {
                stream,
                period_chars,
                covered_chars,
                channel,
            } => format!(
                "stream {stream} repeated a {period_chars}-character unit over the last {covered_chars} characters of its {}",
                channel.as_deref().unwrap_or("output")
            ),
            Part::ToolLooped { message } => match message {
                Some(m) => format!("the model repeated itself ({m})"),
                None => "the model repeated itself".to_string(),
            },
            Part::ServerWaiting => "the server reported waiting requests".to_string(),
            Part::StreamedAtOnce { peak, concurrency } => {
                format!("at most {peak} of {concurrency} requests streamed at once")
            }
            Part::RanAtOnce {
                effective,
                concurrency,
            } => match effective {
                Some(e) => format!(
                    "the server ran {} of {concurrency} requests at once",
                    grouped(*e, 1)
                ),
                None => "the server could not run all requests at once".to_string(),
            },
            Part::ServerLimit {
                limit,
                key,
                in_flight,
            } => format!(
                "the server runs at most {limit} requests at once ({key}); the burst kept {in_flight} in flight"
            ),
            Part::FirstTokenLate {
                late,
                requests,
                first_token_s,
                shortest_s,
            } => format!(
                "{late} of {requests} requests sent at once got their first token only after another had \
                 finished (first token after {first_token_s:.2} s, shortest request {shortest_s:.2} s): \
                 the server did not run all {requests} at once"
            ),
            Part::TtftOverLatency {
                p99_ttft_ms,
                median_latency_ms,
                requests,
            } => format!(
                "the 99th-percentile TTFT ({}) is longer than the median request's whole \
                 latency ({}): with all {requests} sent at once, some waited for others to finish",
                millis(*p99_ttft_ms),
                millis(*median_latency_ms)
            ),
            Part::Preempted { requests, series } => format!(
                "{} preempted during the window ({series})",
                counted(*requests as usize, "request")
            ),
            Part::KvCacheFull { series, peak_usage } => format!(
                "the KV cache was full ({series} reached {:.0}%)",
                peak_usage * 100.0
            ),
            Part::ClientOverloaded {
                ready_wait_ms,
                tbt_median_ms,
                threads,
            } => format!(
                "the measuring client could not keep up: a stream ready to be read waited {} for it \
                 (median), against {} between tokens, on {threads} {}; the figures would be the \
                 client's limit, not the server's (measure fewer streams at once, or from a machine \
                 with more free cores)",
                millis_tenths(*ready_wait_ms),
                millis_tenths(*tbt_median_ms),
                if *threads == 1 { "thread" } else { "threads" }
            ),
            Part::NotCold {
                cached_tokens,
                looked_up_tokens,
                prompt_tokens,
                counter,
                tries,
            } => format!(
                "not a cold prefill: {}, in each of {tries} fresh prompts",
                held_words(*cached_tokens, *looked_up_tokens, *prompt_tokens, counter)
            ),
            Part::NoToken => "the server sent no token".to_string(),
            Part::NoPromptTokens => "the server reported no usage.prompt_tokens".to_string(),
            Part::PromptTokensMismatch { counted, planned } => format!(
                "the server counted {counted} prompt tokens for a prompt of {planned}: more than 0.5% apart"
            ),
            Part::OverCapacity {
                requests,
                context_tokens,
                output_tokens,
                block_tokens,
                kv_cache_tokens,
            } => {
                let one = context_tokens + output_tokens;
                let held = block_tokens.map_or(one, |b| one.div_ceil(b.max(1)) * b.max(1));
                let blocks = match block_tokens {
                    Some(b) if held != one => {
                        format!(", {} in whole blocks of {}", count(held), count(*b))
                    }
                    _ => String::new(),
                };
                format!(
                    "{requests} requests × ({} context + {} output{blocks}) = {} tokens exceed the KV cache of {} tokens",
                    count(*context_tokens),
                    count(*output_tokens),
                    count(u64::from(*requests) * held),
                    count(*kv_cache_tokens)
                )
            }
            Part::OverBudget {
                requests,
                context_tokens,
                output_tokens,
                budget_tokens,
            } => format!(
                "{requests} × ({context_tokens} + {output_tokens}) = {} tokens exceed the budget of {budget_tokens}",
                requests * (context_tokens + output_tokens)
            ),
            Part::ToolFailure { message } => message
                .clone()
                .unwrap_or_else(|| "the tool reports a failure".to_string()),
            Part::SkippedByTool => "skipped by the tool".to_string(),
            Part::ZeroRate { tokens } => {
                format!("the tool recorded 0 tok/s although {tokens} tokens arrived")
            }
            Part::NoRequestCounted => {
                "request_count 0: no request returned text GenAI-Perf counts".to_string()
            }
            Part::RequestsNotCounted {
                uncounted,
                requests,
            } => format!(
                "{uncounted} of {requests} requests returned no text GenAI-Perf counts (it counts a chat \
                 response's content only: an error, an empty answer or one all reasoning counts \
                 nothing), yet their time is in its duration, so its figures do not measure the \
                 server"
            ),
            Part::PageGivesNoReason => "the published page gives no reason".to_string(),
            Part::LoadgenInvalid {
                unmet,
                recommendations,
                early_stopping,
            } => {
                let mut s = format!("MLPerf LoadGen: Result is INVALID ({})", unmet.join("; "));
                if !recommendations.is_empty() {
                    s.push_str(&format!("; recommendations: {}", recommendations.join(" ")));
                }
                for e in early_stopping {
                    s.push_str(&format!("; {e}"));
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cell, DecodeCell, Status};

    fn failed(requests: Option<u64>) -> Part {
        Part::RequestsFailed {
            failed: 3,
            requests,
            first: None,
            error_codes: None,
            kinds: Vec::new(),
        }
    }

    /// Every code in the words sitegen wrote into files before codes.
    #[test]
    fn each_code_is_worded_as_before() {
        let cases: Vec<(Part, &str)> = vec![
            (failed(Some(16)), "3 of 16 requests failed"),
            (failed(None), "3 requests failed"),
            (
                Part::RequestsFailed {
                    failed: 3,
                    requests: Some(16),
                    first: Some("HTTP 500: boom".into()),
                    error_codes: None,
                    kinds: Vec::new(),
                },
                "3 of 16 requests failed; first: HTTP 500: boom",
            ),
            (
                Part::RequestsFailed {
                    failed: 3,
                    requests: Some(16),
                    first: None,
                    error_codes: Some("{'500': 3}".into()),
                    kinds: Vec::new(),
                },
                "3 of 16 requests failed (error codes and counts: {'500': 3})",
            ),
            (
                Part::RequestsFailed {
                    failed: 3,
                    requests: Some(16),
                    first: None,
                    error_codes: None,
                    kinds: vec![
                        FailedKind {
                            kind: "TimeoutError".into(),
                            count: 2,
                        },
                        FailedKind {
                            kind: "error".into(),
                            count: 1,
                        },
                    ],
                },
                "3 of 16 requests failed (TimeoutError ×2, error ×1)",
            ),
            (
                Part::AllRequestsFailed {
                    requests: 10,
                    no_prompt_length: false,
                },
                "all 10 requests failed",
            ),
            (
                Part::AllRequestsFailed {
                    requests: 10,
                    no_prompt_length: true,
                },
                "all 10 requests failed (the file records no prompt length: filed at context 0)",
            ),
            (
                Part::NoneSucceeded {
                    failed: 4,
                    incomplete: 2,
                },
                "no request succeeded (4 failed, 2 cut off at the end)",
            ),
            (
                Part::RequestFailed {
                    message: "HTTP 400: too long".into(),
                },
                "HTTP 400: too long",
            ),
            (
                Part::CutShort {
                    short: 2,
                    requests: 4,
                    mean_tokens: 12.25,
                    asked_tokens: 64,
                },
                "2 of 4 requests were cut short: their streams ended without a finish reason after 12.3 of 64 tokens on average (a server that ends a running stream when another request arrives does this, as llama-cpp-python's interrupt_requests does)",
            ),
            (
                Part::Capped {
                    short: 1,
                    requests: 4,
                    mean_tokens: 1500.0,
                    asked_tokens: 4096,
                },
                "1 of 4 requests were capped: the server ended them with finish_reason \"length\" after 1,500.0 of 4096 tokens on average (the prompt and max_tokens do not fit its context window)",
            ),
            (
                Part::StoppedEarly {
                    short: 1,
                    requests: 2,
                    mean_tokens: 7.0,
                    asked_tokens: 32,
                },
                "1 of 2 requests stopped (finish_reason \"stop\") after 7.0 of 32 tokens on average: the server honoured neither ignore_eos nor min_tokens, so those requests were shorter than asked",
            ),
            (
                Part::MergedEvents {
                    merged: 1,
                    requests: 2,
                    mean_fewer: 1.0,
                    asked_tokens: 32,
                },
                "1 of 2 requests streamed fewer events than tokens (1.0 fewer on average) and ended with finish_reason \"length\": counted as the 32 tokens they asked for, which the server generates for the same prompt not streamed (a server that holds back a multi-byte character split across tokens sends two in one event)",
            ),
            (
                Part::Looped {
                    stream: 2,
                    period_chars: 26,
                    covered_chars: 1040,
                    channel: None,
                },
                "stream 2 repeated a 26-character unit over the last 1040 characters of its output",
            ),
            (
                Part::Looped {
                    stream: 0,
                    period_chars: 5,
                    covered_chars: 400,
                    channel: Some("reasoning".into()),
                },
                "stream 0 repeated a 5-character unit over the last 400 characters of its reasoning",
            ),
            (
                Part::ToolLooped { message: None },
                "the model repeated itself",
            ),
            (
                Part::ToolLooped {
                    message: Some("repetition detected".into()),
                },
                "the model repeated itself (repetition detected)",
            ),
            (Part::ServerWaiting, "the server reported waiting requests"),
            (
                Part::StreamedAtOnce {
                    peak: 1,
                    concurrency: 2,
                },
                "at most 1 of 2 requests streamed at once",
            ),
            (
                Part::RanAtOnce {
                    effective: Some(3.04),
                    concurrency: 8,
                },
                "the server ran 3.0 of 8 requests at once",
            ),
            (
                Part::RanAtOnce {
                    effective: None,
                    concurrency: 8,
                },
                "the server could not run all requests at once",
            ),
            (
                Part::ServerLimit {
                    limit: 4,
                    key: "server_info.max_running_requests".into(),
                    in_flight: 8,
                },
                "the server runs at most 4 requests at once (server_info.max_running_requests); the burst kept 8 in flight",
            ),
            (
                Part::FirstTokenLate {
                    late: 3,
                    requests: 8,
                    first_token_s: 1.234,
                    shortest_s: 1.1,
                },
                "3 of 8 requests sent at once got their first token only after another had finished (first token after 1.23 s, shortest request 1.10 s): the server did not run all 8 at once",
            ),
            (
                Part::TtftOverLatency {
                    p99_ttft_ms: 2500.4,
                    median_latency_ms: 1800.0,
                    requests: 8,
                },
                "the 99th-percentile TTFT (2,500 ms) is longer than the median request's whole latency (1,800 ms): with all 8 sent at once, some waited for others to finish",
            ),
            (
                Part::Preempted {
                    requests: 1,
                    series: "vllm:num_preemptions_total".into(),
                },
                "1 request preempted during the window (vllm:num_preemptions_total)",
            ),
            (
                Part::KvCacheFull {
                    series: "vllm:kv_cache_usage_perc".into(),
                    peak_usage: 0.998,
                },
                "the KV cache was full (vllm:kv_cache_usage_perc reached 100%)",
            ),
            (
                Part::ClientOverloaded {
                    ready_wait_ms: 83.7,
                    tbt_median_ms: 5.04,
                    threads: 1,
                },
                "the measuring client could not keep up: a stream ready to be read waited 83.7 ms for it (median), against 5.0 ms between tokens, on 1 thread; the figures would be the client's limit, not the server's (measure fewer streams at once, or from a machine with more free cores)",
            ),
            (
                Part::NotCold {
                    cached_tokens: 4080,
                    looked_up_tokens: 4096,
                    prompt_tokens: 4096,
                    counter: "vllm:prefix_cache_hits_total".into(),
                    tries: 3,
                },
                "not a cold prefill: the server's prefix cache held 4,080 of the 4,096 prompt tokens (vllm:prefix_cache_hits_total), in each of 3 fresh prompts",
            ),
            (
                Part::NotCold {
                    cached_tokens: 1024,
                    looked_up_tokens: 5120,
                    prompt_tokens: 4096,
                    counter: "hits".into(),
                    tries: 3,
                },
                "not a cold prefill: the server's prefix cache counted 1,024 tokens found of 5,120 looked up (hits) for a prompt of 4,096: other requests were counted with it, in each of 3 fresh prompts",
            ),
            (Part::NoToken, "the server sent no token"),
            (
                Part::NoPromptTokens,
                "the server reported no usage.prompt_tokens",
            ),
            (
                Part::PromptTokensMismatch {
                    counted: 8300,
                    planned: 8192,
                },
                "the server counted 8300 prompt tokens for a prompt of 8192: more than 0.5% apart",
            ),
            (
                Part::OverCapacity {
                    requests: 4,
                    context_tokens: 384,
                    output_tokens: 64,
                    block_tokens: Some(128),
                    kv_cache_tokens: 1920,
                },
                "4 requests × (384 context + 64 output, 512 in whole blocks of 128) = 2,048 tokens exceed the KV cache of 1,920 tokens",
            ),
            (
                Part::OverCapacity {
                    requests: 5,
                    context_tokens: 448,
                    output_tokens: 64,
                    block_tokens: Some(128),
                    kv_cache_tokens: 1920,
                },
                "5 requests × (448 context + 64 output) = 2,560 tokens exceed the KV cache of 1,920 tokens",
            ),
            (
                Part::OverBudget {
                    requests: 16,
                    context_tokens: 8192,
                    output_tokens: 512,
                    budget_tokens: 100000,
                },
                "16 × (8192 + 512) = 139264 tokens exceed the budget of 100000",
            ),
            (
                Part::ToolFailure { message: None },
                "the tool reports a failure",
            ),
            (
                Part::ToolFailure {
                    message: Some("server crashed".into()),
                },
                "server crashed",
            ),
            (Part::SkippedByTool, "skipped by the tool"),
            (
                Part::ZeroRate { tokens: 512 },
                "the tool recorded 0 tok/s although 512 tokens arrived",
            ),
            (
                Part::NoRequestCounted,
                "request_count 0: no request returned text GenAI-Perf counts",
            ),
            (
                Part::RequestsNotCounted {
                    uncounted: 2,
                    requests: 10,
                },
                "2 of 10 requests returned no text GenAI-Perf counts (it counts a chat response's content only: an error, an empty answer or one all reasoning counts nothing), yet their time is in its duration, so its figures do not measure the server",
            ),
            (
                Part::PageGivesNoReason,
                "the published page gives no reason",
            ),
            (
                Part::LoadgenInvalid {
                    unmet: vec![
                        "Performance constraints satisfied : NO".into(),
                        "Early stopping satisfied: NO".into(),
                    ],
                    recommendations: vec![
                        "TTFT constrain not met: Reduce target QPS to improve latency.".into(),
                    ],
                    early_stopping: vec![
                        "TTFT Early Stopping Result: Run unsuccessful. Processed 884736 queries."
                            .into(),
                    ],
                },
                "MLPerf LoadGen: Result is INVALID (Performance constraints satisfied : NO; Early stopping satisfied: NO); recommendations: TTFT constrain not met: Reduce target QPS to improve latency.; TTFT Early Stopping Result: Run unsuccessful. Processed 884736 queries.",
            ),
            (
                Part::LoadgenInvalid {
                    unmet: vec!["Min duration satisfied : NO".into()],
                    recommendations: Vec::new(),
                    early_stopping: Vec::new(),
                },
                "MLPerf LoadGen: Result is INVALID (Min duration satisfied : NO)",
            ),
        ];
        for (part, words) in cases {
            assert_eq!(part.words(), words, "{part:?}");
        }
    }

    #[test]
    fn parts_are_joined_as_the_one_sentence_they_were() {
        let reason = Reason::of(Part::ServerWaiting).and(Part::Preempted {
            requests: 2,
            series: "vllm:num_preemptions_total".into(),
        });
        assert_eq!(
            reason.words(),
            "the server reported waiting requests; 2 requests preempted during the window (vllm:num_preemptions_total)"
        );
        assert_eq!(reason.to_string(), reason.words());
        assert_eq!(
            Reason::join(
                Some(Reason::Stated("old words".into())),
                Some(Reason::of(Part::NoToken))
            ),
            Some(Reason::Stated("old words; the server sent no token".into()))
        );
        assert_eq!(Reason::of_parts(Vec::new()), None);
    }

    #[test]
    fn a_coded_reason_is_stored_as_codes_with_their_parameters() {
        let reason = Reason::Coded(vec![
            failed(Some(16)),
            Part::KvCacheFull {
                series: "vllm:kv_cache_usage_perc".into(),
                peak_usage: 1.0,
            },
            Part::ServerWaiting,
        ]);
        let json = serde_json::to_string(&reason).unwrap();
        assert_eq!(
            json,
            r#"[{"code":"requests_failed","failed":3,"requests":16},{"code":"kv_cache_full","series":"vllm:kv_cache_usage_perc","peak_usage":1.0},{"code":"server_waiting"}]"#
        );
        assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), reason);
    }

    #[test]
    fn an_unknown_code_or_parameter_is_refused_by_name() {
        let e = serde_json::from_str::<Reason>(r#"[{"code":"gremlins"}]"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `gremlins`"), "{e}");
        let e = serde_json::from_str::<Reason>(r#"[{"code":"zero_rate","tokens":1,"why":1}]"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `why`"), "{e}");
        assert!(serde_json::from_str::<Reason>("3").is_err());
    }

    const OLD_CELL: &str = r#"{
  "phase": "decode",
  "context_tokens": 8192,
  "concurrency": 4,
  "status": "error",
  "reason": "1 of 4 requests failed; first: HTTP 500: engine core died"
}"#;

    #[test]
    fn an_old_file_reason_in_words_reads_and_is_shown_verbatim() {
        let cell = crate::store::parse_cell(std::path::Path::new("old.json"), OLD_CELL).unwrap();
        let Cell::Decode(d) = &cell else {
            panic!("{cell:?}")
        };
        let words = "1 of 4 requests failed; first: HTTP 500: engine core died";
        assert_eq!(d.reason, Some(Reason::Stated(words.into())));
        assert_eq!(d.reason.as_ref().unwrap().words(), words);
        // Written again, it is the same text.
        assert!(
            crate::store::to_json(&cell).contains(&format!("\"reason\": \"{words}\"")),
            "{}",
            crate::store::to_json(&cell)
        );
    }

    #[test]
    fn a_file_with_a_coded_reason_reads_back_equal() {
        let cell = Cell::Decode(DecodeCell::without_figures(
            8192,
            4,
            Status::Error,
            Some(Reason::Coded(vec![
                Part::RequestsFailed {
                    failed: 3,
                    requests: Some(4),
                    first: Some("HTTP 500: engine core died".into()),
                    error_codes: None,
                    kinds: Vec::new(),
                },
                Part::StoppedEarly {
                    short: 1,
                    requests: 4,
                    mean_tokens: 12.5,
                    asked_tokens: 64,
                },
            ])),
        ));
        let text = crate::store::to_json(&cell);
        assert!(text.contains("\"code\": \"requests_failed\""), "{text}");
        let read = crate::store::parse_cell(std::path::Path::new("new.json"), &text).unwrap();
        assert_eq!(read, cell);
    }

    #[test]
    fn an_error_cell_needs_a_reason_with_words() {
        let cell =
            |reason| Cell::Decode(DecodeCell::without_figures(8192, 4, Status::Error, reason));
        let check = |c: &Cell| crate::model::validate::cell(c);
        assert!(check(&cell(Some(Reason::of(Part::NoToken)))).is_ok());
        assert!(check(&cell(Some(Reason::Stated(" ".into())))).is_err());
        assert!(check(&cell(Some(Reason::Coded(Vec::new())))).is_err());
        assert!(check(&cell(None)).is_err());
    }
}
