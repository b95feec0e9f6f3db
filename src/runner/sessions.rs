//! `sitegen run --sessions`: S sessions on a growing context, kept running
//! for a window, as agents and chats load a server.
//!
//! Every session sends the same shared prefix first; turn k sends the whole
//! history (prefix, user parts, answers) plus a new user part; the answer,
//! as the server streamed it, joins the history. A session that has had its
//! turns ends and another begins at once. Each session's user parts start
//! with a tag of its own (eight one-token words), so past the shared prefix
//! only the session's own history can be found in the server's cache.
//! Turns started before the window's end are let finish: every turn is
//! counted, and the server's counters, read after the last one, cover
//! exactly the turns the window sent. docs/measurement.md, "Sessions".

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::analysis::{self, Finish, RequestRecord};
use super::plan::{self, KvCache};
use super::window::{self, RequestSettings};
use crate::model::reason::{Part, Reason};
use crate::model::sessions::{ServerCacheCount, SessionDepth, SessionWindow, SessionWorkload};
use crate::model::slo::Latency;
use crate::model::{ApiEndpoint, Status};

/// What `--sessions` and its flags ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionOptions {
    /// Sessions at once, one window each.
    pub sessions: Vec<u32>,
    pub prefix_tokens: u64,
    pub user_tokens: u64,
    pub answer_tokens: u32,
    /// At most this many turns; else as many as the context window holds.
    pub max_turns: Option<u32>,
    pub think_time: Duration,
    /// Measure the sessions alone, not the matrix.
    pub only: bool,
}

/// Turns when `--session-turns` does not say: enough to see the curve,
/// few enough that a session ends within a window on a fast server.
pub const DEFAULT_MAX_TURNS: u32 = 16;

/// Words each a single token in every tokenizer met (GPT-2's and Llama's
/// byte-level BPE, SentencePiece), none longer than three letters: a
/// session's tag is eight of them, one per hexadecimal digit, so every tag
/// has the same eight tokens.
const TAG_WORDS: [&str; 16] = [
    "the", "of", "and", "to", "in", "is", "it", "was", "for", "on", "are", "as", "at", "be", "by",
    "or",
];

/// Session `n`'s tag: eight words naming it within this run.
pub(crate) fn session_tag(salt: u64, n: u64) -> String {
    let mut x = salt ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (0..8)
        .map(|i| TAG_WORDS[((x >> (4 * i)) & 15) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tokens of a session tag.
pub(crate) const TAG_TOKENS: u64 = 8;

/// The workload `opts` asks for on a server of `max_model_len`: as many
/// turns as fit (turn k's prompt and its answer within the context window),
/// at most `max_turns`.
pub(crate) fn workload(opts: &SessionOptions, max_model_len: u64) -> SessionWorkload {
    let mut w = SessionWorkload {
        shared_prefix_tokens: opts.prefix_tokens,
        user_tokens_per_turn: opts.user_tokens,
        answer_tokens: u64::from(opts.answer_tokens),
        turns: 0,
        think_time_ms: opts.think_time.as_millis() as u64,
    };
    let most = opts.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
    while w.turns < most && w.planned_context(w.turns + 1) + w.answer_tokens <= max_model_len {
        w.turns += 1;
    }
    w
}

/// The deepest turn `sessions` sessions can hold at once in the KV cache,
/// by the matrix's rule (`plan::over_capacity`: each request's context and
/// answer in whole blocks, nothing shared), and why the next one is over
/// capacity. All turns without a known cache.
pub(crate) fn deepest_turn(
    w: &SessionWorkload,
    sessions: u32,
    kv: Option<KvCache>,
) -> (u32, Option<Part>) {
    for turn in 1..=w.turns {
        let answer = u32::try_from(w.answer_tokens).unwrap_or(u32::MAX);
        if let Some(why) = plan::over_capacity(w.planned_context(turn), sessions, answer, kv) {
            return (turn - 1, Some(why));
        }
    }
    (w.turns, None)
}

/// The texts every session shares: the prefix, and each turn's user part
/// (after the session's tag).
#[derive(Debug, Clone)]
pub(crate) struct SessionTexts {
    pub prefix: String,
    /// Turn k's user part is `parts[k - 1]`, of `user_tokens - TAG_TOKENS`.
    pub parts: Vec<String>,
}

/// A session's conversation so far, as the API takes it.
struct History<'a> {
    prefix: &'a str,
    /// (user part, answer) per turn; the last answer empty while asked.
    turns: Vec<(String, String)>,
}

impl History<'_> {
    /// The request of the turn just pushed, streamed, `max_tokens` exact.
    fn body(&self, settings: &RequestSettings, max_tokens: u32) -> Value {
        let mut body = window::completion_body(settings, "", max_tokens);
        match settings.endpoint {
            ApiEndpoint::Completions => {
                let mut text = self.prefix.to_string();
                for (user, answer) in &self.turns {
                    text.push(' ');
                    text.push_str(user);
                    text.push_str(answer);
                }
                body["prompt"] = json!(text);
            }
            ApiEndpoint::Chat => {
                let mut messages = vec![json!({"role": "system", "content": self.prefix})];
                for (user, answer) in &self.turns {
                    messages.push(json!({"role": "user", "content": user}));
                    if !answer.is_empty() {
                        messages.push(json!({"role": "assistant", "content": answer}));
                    }
                }
                body["messages"] = json!(messages);
            }
        }
        body
    }
}

/// One turn as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    pub session: u64,
    /// From 1.
    pub turn: u32,
    pub record: RequestRecord,
}

/// Whether the turn's session ended with it: its last planned turn.
fn ends_session(t: &Turn, deepest: u32) -> bool {
    t.turn == deepest && matches!(t.record.finish, Some(Finish::Done(_) | Finish::NoReason))
}

/// Keeps `sessions` sessions running for `window`, each of at most
/// `deepest` turns; the turns in the order they started.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn sessions_window(
    client: &super::client::Client,
    settings: &RequestSettings,
    texts: &SessionTexts,
    w: &SessionWorkload,
    sessions: u32,
    deepest: u32,
    salt: u64,
    window_len: Duration,
    sampling: window::Sampling<'_>,
    live_tokens: Arc<AtomicU64>,
) -> window::WindowRecording<Vec<Turn>> {
    // Sessions are numbered apart in each window (the high half is the
    // number of sessions): a window's session 0 does not find the previous
    // window's session 0 in the cache.
    let next_session = Arc::new(AtomicU64::new(u64::from(sessions) << 32));
    let answer_tokens = u32::try_from(w.answer_tokens).unwrap_or(u32::MAX);
    let think = Duration::from_millis(w.think_time_ms);
    let mut recording =
        window::measured_window(client, window_len, sampling, |t0, deadline| async move {
            let mut slots = tokio::task::JoinSet::new();
            for slot in 0..sessions {
                let client = client.clone();
                let settings = settings.clone();
                let texts = texts.clone();
                let next = Arc::clone(&next_session);
                let live = Arc::clone(&live_tokens);
                slots.spawn(async move {
                    let mut turns = Vec::new();
                    'sessions: while Instant::now() < deadline {
                        let session = next.fetch_add(1, Ordering::Relaxed);
                        let tag = session_tag(salt, session);
                        let mut history = History {
                            prefix: &texts.prefix,
                            turns: Vec::new(),
                        };
                        for turn in 1..=deepest {
                            if turn > 1 && !think.is_zero() {
                                tokio::time::sleep(think).await;
                            }
                            // A turn begun inside the window is let finish;
                            // none begins after it.
                            if Instant::now() >= deadline {
                                break 'sessions;
                            }
                            let part = &texts.parts[turn as usize - 1];
                            history.turns.push((format!("{tag} {part}"), String::new()));
                            let body = history.body(&settings, answer_tokens);
                            let mut record = window::record_turn(
                                &client,
                                &settings,
                                &body,
                                slot,
                                t0,
                                Some(&live),
                            )
                            .await;
                            let failed = matches!(record.finish, Some(Finish::Error(_)));
                            let answer = record.text.take().unwrap_or_default();
                            turns.push(Turn {
                                session,
                                turn,
                                record,
                            });
                            // A failing slot stops: the window reports the error.
                            if failed {
                                break 'sessions;
                            }
                            if let Some(last) = history.turns.last_mut() {
                                last.1 = answer;
                            }
                        }
                    }
                    turns
                });
            }
            let mut turns = Vec::new();
            while let Some(done) = slots.join_next().await {
                turns.extend(done.expect("a session task panicked"));
            }
            turns
        })
        .await;
    recording
        .records
        .sort_by(|a, b| a.record.start.total_cmp(&b.record.start));
    recording
}

/// The latencies of every turn (each let finish, so none is cut off by the
/// window's end): TTFT, TPOT (first to last token over the tokens after
/// the first), time between tokens weighted by tokens, end to end.
pub(crate) fn turn_latency(turns: &[&Turn]) -> Option<Latency> {
    let mut ttft = Vec::new();
    let mut tpot = Vec::new();
    let mut tbt = Vec::new();
    let mut e2e = Vec::new();
    for t in turns {
        let r = &t.record;
        let Some(&(first, k0)) = r.chunks.first() else {
            continue;
        };
        ttft.push(((first - r.start) * 1000.0, 1.0));
        let (last, _) = *r.chunks.last().expect("a first chunk");
        let after_first = r.tokens() - k0;
        if after_first > 0 && last > first {
            let per_token = (last - first) * 1000.0 / after_first as f64;
            tpot.push((per_token, 1.0));
            tbt.push((per_token, after_first as f64));
        }
        if matches!(r.finish, Some(Finish::Done(_) | Finish::NoReason)) {
            e2e.push(((r.end - r.start) * 1000.0, 1.0));
        }
    }
    Latency {
        ttft_ms: analysis::quantiles(&ttft, ttft.len()),
        tpot_ms: analysis::quantiles(&tpot, tpot.len()),
        tbt_ms: analysis::quantiles(&tbt, tpot.len()),
        e2e_ms: analysis::quantiles(&e2e, e2e.len()),
    }
    .known()
}

/// The figures of each depth from its turns (all begun inside the window):
/// the context the server counted (median), TTFT, prompt and cached tokens
/// where the server said them, one session's decode speed; depths past
/// `deepest` are Over capacity for `why`. A depth no session reached is
/// left out. `status` is the window's, given to every measured depth but
/// Looped ones, which are their own.
pub(crate) fn depth_figures(
    w: &SessionWorkload,
    turns: &[Turn],
    deepest: u32,
    over: Option<&Part>,
    status: Status,
    reason: Option<&Reason>,
) -> Vec<SessionDepth> {
    let mut depths = Vec::new();
    for turn in 1..=w.turns {
        if turn > deepest {
            let why = over.cloned().map(Reason::of);
            depths.push(SessionDepth::without_figures(
                turn,
                w.planned_context(turn),
                Status::OverCapacity,
                why,
            ));
            continue;
        }
        let at: Vec<&Turn> = turns.iter().filter(|t| t.turn == turn).collect();
        if at.is_empty() {
            continue;
        }
        let mut prompts: Vec<u64> = at.iter().filter_map(|t| t.record.prompt_tokens).collect();
        prompts.sort_unstable();
        let all_counted = prompts.len() == at.len();
        let all_cached = at.iter().all(|t| t.record.cached_tokens.is_some());
        let latency = turn_latency(&at);
        let looped = at.iter().find_map(|t| {
            let (period, covered) = analysis::find_loop(&t.record.text_tail)?;
            Some(Part::Looped {
                stream: t.record.stream,
                period_chars: period as u32,
                covered_chars: covered as u32,
                channel: None,
            })
        });
        let (status, reason) = match looped {
            Some(part) if status != Status::Error => (
                Status::Looped,
                Some(match reason {
                    Some(r) => r.clone().and(part),
                    None => Reason::of(part),
                }),
            ),
            _ => (status, reason.cloned()),
        };
        // As in the matrix: Looped and Error carry no figures.
        let figures = status.has_figures();
        let mut depth = SessionDepth::without_figures(
            turn,
            prompts
                .get(prompts.len() / 2)
                .copied()
                .unwrap_or_else(|| w.planned_context(turn)),
            status,
            reason,
        );
        depth.turns = Some(at.len() as u64);
        if figures {
            depth.ttft_ms = latency.as_ref().and_then(|l| l.ttft_ms.clone());
            depth.per_session_tok_per_s = latency
                .as_ref()
                .and_then(|l| l.tpot_ms.as_ref()?.p50)
                .filter(|ms| *ms > 0.0)
                .map(|ms| 1000.0 / ms);
        }
        if all_counted {
            depth.prompt_tokens = Some(prompts.iter().sum());
        }
        if all_counted && all_cached {
            depth.cached_tokens = Some(
                at.iter()
                    .filter_map(|t| t.record.cached_tokens)
                    .map(|c| c.0)
                    .sum(),
            );
        }
        depths.push(depth);
    }
    depths
}

/// The window's own counts: (sessions started, sessions completed, turns
/// started, turns completed) inside a window of `window_s`.
pub(crate) fn counts(turns: &[Turn], deepest: u32, window_s: f64) -> (u64, u64, u64, u64) {
    let mut started = std::collections::BTreeSet::new();
    let mut completed = 0;
    let mut turns_done = 0;
    for t in turns {
        if t.turn == 1 {
            started.insert(t.session);
        }
        let ended_inside = t.record.end <= window_s;
        if ended_inside && matches!(t.record.finish, Some(Finish::Done(_) | Finish::NoReason)) {
            turns_done += 1;
        }
        if ended_inside && ends_session(t, deepest) {
            completed += 1;
        }
    }
    (
        started.len() as u64,
        completed,
        turns.len() as u64,
        turns_done,
    )
}

/// The server's prefix-cache counters' growth over the window.
pub(crate) fn server_cache(
    before: Option<&super::metrics::DecodeCounters>,
    after: Option<&super::metrics::DecodeCounters>,
) -> Option<ServerCacheCount> {
    let (b, a) = (before?.prefix_cache?, after?.prefix_cache?);
    let (looked_up, cached) = a.since(&b)?;
    Some(ServerCacheCount {
        looked_up_tokens: looked_up,
        cached_tokens: cached,
        counter: a.found_series.to_string(),
    })
}

/// A window with every depth Over capacity: not even turn 1 fits.
pub(crate) fn over_capacity_window(
    w: SessionWorkload,
    sessions: u32,
    window_s: f64,
    why: Part,
) -> SessionWindow {
    let mut window = SessionWindow::without_figures(
        w,
        sessions,
        window_s,
        Status::OverCapacity,
        Some(Reason::of(why.clone())),
    );
    window.depths = depth_figures(&w, &[], 0, Some(&why), Status::OverCapacity, None);
    window
}

/// Texts of the sessions workload are numbered past the matrix's streams
/// and its calibration samples: no session text shares a start with them.
const PREFIX_STREAM: u32 = (1 << 20) + 1;
const PART_STREAM: u32 = (1 << 20) + 2;
const COLD_STREAM: u32 = (1 << 20) + 3;

/// Cold prompts measured at each depth, whose median TTFT is the depth's
/// cold figure. One is not enough: on real vLLM (CPU), the first prompts of
/// a length a fresh server sees, or a moment's load on the machine, made a
/// single cold prompt up to twice as slow as the same work inside a window
/// (CI, 2026-12-07: 35-44 ms against 15-33 ms), and the page would have
/// called that the cache's benefit.
const COLD_PROMPTS: usize = 3;

impl super::Measure {
    /// The sessions workload: the cold prompts of each depth, then one
    /// window per number of sessions, each written as it finishes. Windows
    /// already in the run folder are kept (as cells are), Error ones
    /// measured again unless `keep_errors`.
    pub(crate) async fn sessions(&self, opts: &SessionOptions) -> anyhow::Result<()> {
        let w = workload(opts, self.max_model_len);
        if w.turns == 0 {
            anyhow::bail!(
                "sessions: the first turn ({} prefix + {} user tokens) and its {} answer tokens exceed max_model_len {}",
                w.shared_prefix_tokens,
                w.user_tokens_per_turn,
                w.answer_tokens,
                self.max_model_len
            );
        }
        anyhow::ensure!(
            w.user_tokens_per_turn > TAG_TOKENS,
            "sessions: --session-user must be more than the {TAG_TOKENS} tokens of a session's tag"
        );
        let window_s = self.plan.window_s;
        let mut todo = Vec::new();
        for &s in &opts.sessions {
            let key = SessionWindow::without_figures(w, s, window_s, Status::Valid, None).key();
            let path = self
                .run_dir
                .join(crate::store::SESSIONS_DIR)
                .join(key.file_name());
            if !self.force && path.exists() {
                let kept: SessionWindow = crate::store::read_record(&path).map_err(|e| {
                    anyhow::anyhow!("{e}: fix or delete it, or measure again with --force")
                })?;
                if kept.status != Status::Error || self.keep_errors {
                    continue;
                }
            }
            todo.push(s);
        }
        eprintln!(
            "sessions: {} turns a session ({} shared prefix, {} user and {} answer tokens a turn, context {} to {}); {} at once: {}",
            w.turns,
            crate::model::format::count(w.shared_prefix_tokens),
            crate::model::format::count(w.user_tokens_per_turn),
            crate::model::format::count(w.answer_tokens),
            crate::model::format::count(w.planned_context(1)),
            crate::model::format::count(w.planned_context(w.turns)),
            if todo.is_empty() {
                "all measured already".to_string()
            } else {
                String::new()
            },
            todo.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        if todo.is_empty() {
            return Ok(());
        }
        let kv = self.plan.kv;
        let plans: Vec<(u32, u32, Option<Part>)> = todo
            .iter()
            .map(|&s| {
                let (deepest, why) = deepest_turn(&w, s, kv);
                (s, deepest, why)
            })
            .collect();
        let deepest_any = plans.iter().map(|p| p.1).max().unwrap_or(0);
        let texts = self.session_texts(&w).await?;
        let cold = self.cold_of_depths(&w, deepest_any).await?;
        for (s, deepest, why) in plans {
            let window = match (deepest, why) {
                (0, Some(why)) => over_capacity_window(w, s, window_s, why),
                (deepest, why) => {
                    self.warm_prefix(&texts).await;
                    self.settle().await;
                    let mut window = self.session_window(&w, &texts, s, deepest, why).await;
                    for d in &mut window.depths {
                        if d.status.has_figures() {
                            (d.cold_ttft_ms, d.cold_prompts) =
                                cold.get(d.turn as usize - 1).copied().flatten().unzip();
                        }
                    }
                    window
                }
            };
            if window.status == Status::Error && self.client.get_json("/v1/models").await.is_err() {
                anyhow::bail!(
                    "the server at {} stopped answering during {s} sessions; that window was discarded and finished windows are kept in {}: run the same command to resume",
                    self.client.base(),
                    self.run_dir.display()
                );
            }
            self.write_meta_once()?;
            crate::store::write_record(&self.run_dir, &window)?;
            eprintln!("{}", describe(&window));
        }
        Ok(())
    }

    /// Sends the shared prefix once, as a server that has served sessions
    /// before holds it: the window then measures sessions in their steady
    /// state, not the first one to bring the prefix.
    async fn warm_prefix(&self, texts: &SessionTexts) {
        if texts.prefix.is_empty() {
            return;
        }
        let body = History {
            prefix: &texts.prefix,
            turns: Vec::new(),
        }
        .body(&self.settings, 1);
        window::record_request(
            &self.client,
            &self.settings,
            &body,
            0,
            Instant::now(),
            None,
            None,
        )
        .await;
    }

    /// The shared prefix and each turn's user part, exact in tokens where
    /// the server has a tokenizer.
    async fn session_texts(&self, w: &SessionWorkload) -> anyhow::Result<SessionTexts> {
        let id = |stream, context| crate::runner::prompt::TextId {
            salt: self.salt,
            stream,
            context,
        };
        let prefix = if w.shared_prefix_tokens == 0 {
            String::new()
        } else {
            self.text(
                id(PREFIX_STREAM, w.shared_prefix_tokens),
                w.shared_prefix_tokens,
            )
            .await?
            .text
        };
        let mut parts = Vec::with_capacity(w.turns as usize);
        for turn in 1..=w.turns {
            let part = self
                .text(
                    id(PART_STREAM, u64::from(turn)),
                    w.user_tokens_per_turn - TAG_TOKENS,
                )
                .await?;
            parts.push(part.text);
        }
        Ok(SessionTexts { prefix, parts })
    }

    /// TTFT of a cold prompt at each depth's planned context, up to
    /// `deepest`: the median of [`COLD_PROMPTS`] prompts, each measured as
    /// a prefill cell (a fresh text, proven cold by the server's counters
    /// where it has them), with how many were Valid; `None` where none was.
    /// The depths are measured in turn, then again, so a moment's load
    /// spreads over the depths and is one of a depth's prompts at most.
    async fn cold_of_depths(
        &self,
        w: &SessionWorkload,
        deepest: u32,
    ) -> anyhow::Result<Vec<Option<(f64, u32)>>> {
        let mut ttfts: Vec<Vec<f64>> = vec![Vec::new(); deepest as usize];
        for pass in 0..COLD_PROMPTS {
            for turn in 1..=deepest {
                let ctx = w.planned_context(turn);
                let id = crate::runner::prompt::TextId {
                    salt: self.salt,
                    stream: COLD_STREAM,
                    context: ctx,
                };
                // The first pass's text is the run's own; each later one is
                // new, so no pass finds an earlier one's in the cache.
                let id = match pass {
                    0 => id,
                    _ => id.salted(crate::runner::prompt::fresh_salt()),
                };
                let prompt = self.prompt(id, ctx).await?;
                let (cell, _) = self.cold_prefill(ctx, ctx, prompt).await?;
                let ttft = match cell {
                    crate::model::Cell::Prefill(p) if p.status == Status::Valid => p.ttft_ms,
                    _ => None,
                };
                eprintln!(
                    "sessions: cold prompt {} of {COLD_PROMPTS} of {} tokens (turn {turn}): {}",
                    pass + 1,
                    crate::model::format::count(ctx),
                    ttft.map_or("not Valid".into(), |ms| format!("TTFT {ms:.1} ms"))
                );
                ttfts[turn as usize - 1].extend(ttft);
            }
        }
        Ok(ttfts
            .into_iter()
            .map(|t| {
                let n = t.len() as u32;
                crate::stats::median(t).map(|ms| (ms, n))
            })
            .collect())
    }

    /// One window of `s` sessions, at most `deepest` turns each.
    async fn session_window(
        &self,
        w: &SessionWorkload,
        texts: &SessionTexts,
        s: u32,
        deepest: u32,
        over: Option<Part>,
    ) -> SessionWindow {
        let window_s = self.plan.window_s;
        let rec = sessions_window(
            &self.client,
            &self.settings,
            texts,
            w,
            s,
            deepest,
            self.salt,
            Duration::from_secs_f64(window_s),
            window::Sampling {
                metrics_every: self.metrics_every,
                gpus: None,
            },
            Arc::new(AtomicU64::new(0)),
        )
        .await;
        let turns = rec.records;
        let records: Vec<RequestRecord> = turns.iter().map(|t| t.record.clone()).collect();
        // The whole window's status as a decode window's (failures, cut
        // short, loops, the server's waiting gauge); not "fewer in flight
        // than sessions": a session between turns is not decoding.
        let mut f = analysis::summarize(&records, window_s, 1, rec.server.as_ref());
        super::self_check::heed(
            rec.client.as_ref(),
            f.tbt_median_ms,
            &mut f.status,
            &mut f.reason,
        );
        let word = match (rec.engine, self.metrics_every) {
            (Some(engine), Some(every)) => super::metrics::summarize_window(
                format!(
                    "{}'s /metrics every {}",
                    engine.engine,
                    super::gpu::interval_words(every)
                ),
                &rec.gauges,
                rec.counters_before.as_ref(),
                rec.counters_after.as_ref(),
            ),
            _ => None,
        };
        if let Some(word) = &word {
            (f.status, f.reason) = analysis::heed_server_word(f.status, f.reason.take(), word);
        }
        let figures = f.status.has_figures();
        let (started, completed, turns_started, turns_done) = counts(&turns, deepest, window_s);
        let latency = turn_latency(&turns.iter().collect::<Vec<_>>());
        let mut window =
            SessionWindow::without_figures(*w, s, window_s, f.status, f.reason.clone());
        window.window_start_unix_s = Some(rec.window_start_unix_s);
        window.sessions_started = Some(started);
        window.sessions_completed = Some(completed);
        window.turns_started = Some(turns_started);
        window.turns_completed = Some(turns_done);
        window.failed_turns = Some(f.failed_requests);
        window.output_tokens = Some(f.output_tokens);
        if figures {
            window.total_tok_per_s = Some(f.total_tok_per_s);
            window.turns_per_s = Some(turns_done as f64 / window_s);
            window.sessions_per_s = Some(completed as f64 / window_s);
            window.ttft_median_ms = latency.as_ref().and_then(|l| l.ttft_ms.as_ref()?.p50);
            window.per_session_tok_per_s = latency
                .as_ref()
                .and_then(|l| l.tpot_ms.as_ref()?.p50)
                .filter(|ms| *ms > 0.0)
                .map(|ms| 1000.0 / ms);
            window.latency = latency.map(Box::new);
        }
        window.cached_tokens_from = turns
            .iter()
            .find_map(|t| t.record.cached_tokens.map(|(_, from)| from.to_string()));
        window.server_cache =
            server_cache(rec.counters_before.as_ref(), rec.counters_after.as_ref());
        window.preemptions = word.as_ref().and_then(|w| w.counters.preemptions);
        window.client = rec.client;
        window.depths = depth_figures(
            w,
            &turns,
            deepest,
            over.as_ref(),
            f.status,
            f.reason.as_ref(),
        );
        window
    }
}

/// One line per window, as the run prints it.
fn describe(w: &SessionWindow) -> String {
    use crate::model::format;
    let head = format!("sessions × {}: {}", w.sessions, w.status.label());
    if !w.status.has_figures() {
        return match &w.reason {
            Some(r) => format!("{head} ({})", r.words()),
            None => head,
        };
    }
    let depth = |d: &SessionDepth| {
        let ttft = d
            .ttft_median_ms()
            .map_or("—".into(), |ms| format!("{ms:.0} ms"));
        let cold = d
            .cold_ttft_ms
            .map_or(String::new(), |ms| format!(" (cold {ms:.0} ms)"));
        format!(
            "turn {} at {}: TTFT {ttft}{cold}",
            d.turn,
            format::count(d.context_tokens)
        )
    };
    let measured: Vec<&SessionDepth> = w.depths.iter().filter(|d| d.ttft_ms.is_some()).collect();
    let ends = match (measured.first(), measured.last()) {
        (Some(a), Some(b)) if a.turn != b.turn => format!("; {}; {}", depth(a), depth(b)),
        (Some(a), _) => format!("; {}", depth(a)),
        _ => String::new(),
    };
    let cache = w
        .server_cache
        .as_ref()
        .and_then(|c| {
            Some(format!(
                ", {:.1}% of prompt tokens cached",
                c.share()? * 100.0
            ))
        })
        .unwrap_or_default();
    format!(
        "{head}: {} tok/s, {} turns/s{cache}{ends}",
        format::tok_per_s(w.total_tok_per_s.unwrap_or(0.0)),
        w.turns_per_s.map_or("—".into(), |r| format!("{r:.2}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(prefix: u64, user: u64, answer: u32, turns: Option<u32>) -> SessionOptions {
        SessionOptions {
            sessions: vec![1, 4],
            prefix_tokens: prefix,
            user_tokens: user,
            answer_tokens: answer,
            max_turns: turns,
            think_time: Duration::ZERO,
            only: false,
        }
    }

    #[test]
    fn sessions_have_the_turns_the_context_window_holds() {
        // 1024 + k*256 + (k-1)*64 + 64 <= 4096: k = 9 (3,840 + 64).
        let w = workload(&opts(1024, 256, 64, None), 4096);
        assert_eq!(w.turns, 9);
        assert!(w.planned_context(9) + 64 <= 4096);
        assert!(w.planned_context(10) + 64 > 4096);
        assert_eq!(workload(&opts(1024, 256, 64, Some(3)), 4096).turns, 3);
        assert_eq!(workload(&opts(4096, 256, 64, None), 4096).turns, 0);
    }

    #[test]
    fn the_deepest_turn_is_where_s_requests_fit_the_kv_cache_by_the_matrix_rule() {
        let w = workload(&opts(1024, 256, 64, None), 4096);
        let kv = Some(KvCache {
            tokens: 8192,
            block: Some(128),
        });
        // One session holds every turn; four hold turns whose context and
        // answer take at most 2,048 tokens in whole blocks: turn 3 (1,920 +
        // 64 = 16 blocks) is the last; turn 4 needs 2,240 + 64 = 18 blocks.
        assert_eq!(deepest_turn(&w, 1, kv).0, 9);
        let (deepest, why) = deepest_turn(&w, 4, kv);
        assert_eq!(deepest, 3);
        assert_eq!(
            why.unwrap().words(),
            "4 requests × (2,240 context + 64 output) = 9,216 tokens exceed the KV cache of 8,192 tokens"
        );
        assert_eq!(deepest_turn(&w, 64, kv).0, 0);
        assert_eq!(deepest_turn(&w, 64, None), (9, None));
    }

    #[test]
    fn tags_are_eight_words_and_differ_between_sessions() {
        let a = session_tag(7, 0);
        assert_eq!(a.split(' ').count(), TAG_TOKENS as usize);
        let tags: std::collections::BTreeSet<String> =
            (0..1000).map(|n| session_tag(7, n)).collect();
        assert_eq!(tags.len(), 1000);
        assert_ne!(session_tag(8, 0), a);
    }

    fn turn(
        session: u64,
        k: u32,
        start: f64,
        ttft: f64,
        tokens: u64,
        prompt: u64,
        cached: Option<u64>,
    ) -> Turn {
        let step = 0.01;
        let first = start + ttft;
        Turn {
            session,
            turn: k,
            record: RequestRecord {
                stream: session as u32,
                start,
                chunks: (0..tokens).map(|i| (first + i as f64 * step, 1)).collect(),
                end: first + (tokens - 1) as f64 * step,
                finish: Some(Finish::Done("length".into())),
                prompt_tokens: Some(prompt),
                cached_tokens: cached.map(|c| (c, super::super::client::CACHED_TOKENS_USAGE)),
                asked_tokens: Some(tokens),
                ..Default::default()
            },
        }
    }

    #[test]
    fn each_depth_has_its_own_turns_ttft_and_cache_and_the_rest_is_over_capacity() {
        let w = SessionWorkload {
            shared_prefix_tokens: 1000,
            user_tokens_per_turn: 100,
            answer_tokens: 11,
            turns: 3,
            think_time_ms: 0,
        };
        let turns = vec![
            turn(0, 1, 0.0, 0.200, 11, 1100, Some(896)),
            turn(1, 1, 0.0, 0.300, 11, 1100, Some(896)),
            turn(0, 2, 0.4, 0.050, 11, 1211, Some(1024)),
            turn(1, 2, 0.5, 0.070, 11, 1213, Some(1152)),
            turn(2, 1, 0.9, 0.100, 11, 1100, Some(1024)),
        ];
        let over = Part::NoToken;
        let depths = depth_figures(&w, &turns, 2, Some(&over), Status::Valid, None);
        assert_eq!(depths.len(), 3);
        let d1 = &depths[0];
        assert_eq!((d1.turn, d1.turns, d1.context_tokens), (1, Some(3), 1100));
        // Nearest rank: the 2nd of 100, 200, 300 ms.
        assert!((d1.ttft_median_ms().unwrap() - 200.0).abs() < 1e-6);
        assert_eq!(d1.prompt_tokens, Some(3300));
        assert_eq!(d1.cached_tokens, Some(896 + 896 + 1024));
        // 10 ms a token after the first: 100 tok/s.
        assert!((d1.per_session_tok_per_s.unwrap() - 100.0).abs() < 1e-6);
        let d2 = &depths[1];
        assert_eq!((d2.turns, d2.context_tokens), (Some(2), 1213));
        assert!((d2.ttft_median_ms().unwrap() - 50.0).abs() < 1e-6);
        assert_eq!(depths[2].status, Status::OverCapacity);
        assert!(depths[2].ttft_ms.is_none());
        // A depth without usage's cached tokens says none, not zero.
        let mut unsaid = turns.clone();
        unsaid[4].record.cached_tokens = None;
        let depths = depth_figures(&w, &unsaid, 2, None, Status::Valid, None);
        assert_eq!(depths[0].cached_tokens, None);
        assert_eq!(depths[1].cached_tokens, Some(1024 + 1152));
        // A depth no session reached is absent.
        let depths = depth_figures(&w, &turns[..2], 3, None, Status::Valid, None);
        assert_eq!(depths.iter().map(|d| d.turn).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn counts_are_of_the_window_every_started_turn_counted() {
        let turns = vec![
            turn(0, 1, 0.0, 0.2, 11, 1100, None),
            turn(0, 2, 0.4, 0.2, 11, 1211, None),
            turn(1, 1, 0.0, 0.2, 11, 1100, None),
            turn(1, 2, 0.9, 0.2, 11, 1211, None), // ends at 1.2 s, past a 1 s window
        ];
        assert_eq!(counts(&turns, 2, 1.0), (2, 1, 4, 3));
    }

    #[test]
    fn a_history_is_one_prompt_for_completions_and_messages_for_chat() {
        let mut settings = RequestSettings {
            model: "m".into(),
            temperature: 0.0,
            endpoint: ApiEndpoint::Completions,
            token_count: crate::model::TokenCount::StreamUsage,
        };
        let h = History {
            prefix: "System.",
            turns: vec![
                ("the of Hello".into(), " an answer".into()),
                ("the of More".into(), String::new()),
            ],
        };
        let body = h.body(&settings, 8);
        assert_eq!(body["prompt"], "System. the of Hello an answer the of More");
        assert_eq!(body["max_tokens"], 8);
        settings.endpoint = ApiEndpoint::Chat;
        let body = h.body(&settings, 8);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
    }
}
