//! What serde cannot check of the data: required figures by status, finite
//! numbers, non-empty names, the run-id alphabet. Pure; [`crate::store`]
//! names the file an error is in.

use crate::model::{Cell, RunMeta, SCHEMA_VERSION, Status};

/// A field of a record that is not as the format wants it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("field `{field}`: {message}")]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

fn invalid(field: &str, message: impl Into<String>) -> Invalid {
    Invalid {
        field: field.to_string(),
        message: message.into(),
    }
}

/// The rule of [`run_id`] as a regular expression, for the browser.
pub(crate) const RUN_ID_PATTERN: &str = "^[a-z0-9_-][a-z0-9._-]*$";

/// Whether `id` can name a run: a directory name and a URL segment, so
/// lowercase letters, digits, '.', '_' and '-', not starting with '.'.
pub fn run_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
}

/// Checks a run's metadata: the schema version, names that must not be
/// empty, a UTC time, counts and durations above 0.
pub fn meta(meta: &RunMeta) -> Result<(), Invalid> {
    if meta.schema_version != SCHEMA_VERSION {
        return Err(invalid(
            "schema_version",
            format!(
                "expected {SCHEMA_VERSION}, found {} (written by another sitegen version)",
                meta.schema_version
            ),
        ));
    }
    for (field, value) in [
        ("model", &meta.model),
        ("served_model", &meta.served_model),
        ("hardware.gpu", &meta.hardware.gpu),
        ("engine.name", &meta.engine.name),
    ] {
        if value.trim().is_empty() {
            return Err(invalid(field, "expected a non-empty string"));
        }
    }
    if let Some(at) = &meta.measured_at
        && (!at.ends_with('Z') || humantime::parse_rfc3339(at).is_err())
    {
        return Err(invalid(
            "measured_at",
            format!("expected a UTC time in RFC 3339 like \"2026-11-30T12:00:00Z\", found {at:?}"),
        ));
    }
    if meta.hardware.gpu_count == 0 {
        return Err(invalid("hardware.gpu_count", "expected at least 1"));
    }
    if let Some(secs) = meta.run.seconds_per_measurement
        && !(secs.is_finite() && secs > 0.0)
    {
        return Err(invalid(
            "run.seconds_per_measurement",
            format!("expected a positive number of seconds, found {secs}"),
        ));
    }
    if meta.run.max_output_tokens == Some(0) {
        return Err(invalid("run.max_output_tokens", "expected at least 1"));
    }
    Ok(())
}

fn check_number(field: &str, value: Option<f64>) -> Result<(), Invalid> {
    match value {
        Some(v) if !(v.is_finite() && v >= 0.0) => Err(invalid(
            field,
            format!("expected a finite number >= 0, found {v}"),
        )),
        _ => Ok(()),
    }
}

/// Checks that a figure is there exactly when a cell of `status` carries
/// figures (`wanted`), naming the field when it is not.
fn figure_presence(
    field: &str,
    status: Status,
    present: bool,
    wanted: bool,
) -> Result<(), Invalid> {
    match (present, wanted) {
        (false, true) => Err(invalid(
            field,
            format!("expected a value: a cell with status {status:?} carries it"),
        )),
        (true, false) => Err(invalid(
            field,
            format!("expected no value: a cell with status {status:?} has no figures to show"),
        )),
        _ => Ok(()),
    }
}

/// Checks what serde cannot: figures that a status requires or forbids.
pub fn cell(cell: &Cell) -> Result<(), Invalid> {
    let status = cell.status();
    // A decode cell may have no prompt at all (llm_decode_bench's context 0);
    // a prefill cell measures a prompt, so it has one.
    if cell.context_tokens() == 0 && matches!(cell, Cell::Prefill(_)) {
        return Err(invalid(
            "context_tokens",
            "expected at least 1 for a prefill cell",
        ));
    }
    let reason = match cell {
        Cell::Prefill(c) => &c.reason,
        Cell::Decode(c) => &c.reason,
    };
    if status == Status::Error && reason.as_ref().is_none_or(|r| r.words().trim().is_empty()) {
        return Err(invalid(
            "reason",
            "expected why the cell failed (status is error)",
        ));
    }
    match cell {
        Cell::Prefill(c) => {
            check_number("prompt_tok_per_s", c.prompt_tok_per_s)?;
            check_number("ttft_ms", c.ttft_ms)?;
            if status == Status::Valid {
                for (field, v) in [
                    ("prompt_tok_per_s", c.prompt_tok_per_s),
                    ("ttft_ms", c.ttft_ms),
                ] {
                    figure_presence(field, status, v.is_some(), true)?;
                }
            } else if status != Status::Error {
                return Err(invalid(
                    "status",
                    format!("expected \"valid\" or \"error\" for a prefill cell, found {status:?}"),
                ));
            }
        }
        Cell::Decode(c) => {
            if c.concurrency == 0 {
                return Err(invalid("concurrency", "expected at least 1"));
            }
            for (field, v) in [
                ("total_tok_per_s", c.total_tok_per_s),
                ("per_request_tok_per_s", c.per_request_tok_per_s),
                ("ttft_median_ms", c.ttft_median_ms),
                ("tbt_median_ms", c.tbt_median_ms),
                ("avg_active_requests", c.avg_active_requests),
                ("measured_s", c.measured_s),
            ] {
                check_number(field, v)?;
            }
            let figures = status.has_figures();
            figure_presence(
                "total_tok_per_s",
                status,
                c.total_tok_per_s.is_some(),
                figures,
            )?;
            if !figures {
                let present = c.per_request_tok_per_s.is_some();
                figure_presence("per_request_tok_per_s", status, present, false)?;
            }
        }
    }
    Ok(())
}

/// Checks a sessions window: a workload that can run, every depth from 1 to
/// its turns in order, figures only where the status carries them, a reason
/// wherever the status is not Valid, and counts that add up.
pub fn sessions(window: &crate::model::sessions::SessionWindow) -> Result<(), Invalid> {
    let w = &window.workload;
    if window.sessions == 0 {
        return Err(invalid("sessions", "expected at least 1 session"));
    }
    if !(window.window_s.is_finite() && window.window_s > 0.0) {
        return Err(invalid(
            "window_s",
            format!(
                "expected a finite number of seconds above 0, found {}",
                window.window_s
            ),
        ));
    }
    for (field, v) in [
        ("workload.user_tokens_per_turn", w.user_tokens_per_turn),
        ("workload.answer_tokens", w.answer_tokens),
        ("workload.turns", u64::from(w.turns)),
    ] {
        if v == 0 {
            return Err(invalid(field, "expected at least 1"));
        }
    }
    for (field, v) in [
        ("total_tok_per_s", window.total_tok_per_s),
        ("turns_per_s", window.turns_per_s),
        ("sessions_per_s", window.sessions_per_s),
        ("ttft_median_ms", window.ttft_median_ms),
        ("per_session_tok_per_s", window.per_session_tok_per_s),
    ] {
        check_number(field, v)?;
    }
    needs_reason("reason", window.status, window.reason.as_ref())?;
    let measured = !matches!(window.status, Status::OverCapacity);
    figure_presence(
        "total_tok_per_s",
        window.status,
        window.total_tok_per_s.is_some(),
        window.status.has_figures(),
    )?;
    for (field, done, started) in [
        (
            "turns_completed",
            window.turns_completed,
            window.turns_started,
        ),
        (
            "sessions_completed",
            window.sessions_completed,
            window.sessions_started,
        ),
    ] {
        if let (Some(done), Some(started)) = (done, started)
            && done > started
        {
            return Err(invalid(
                field,
                format!("expected at most the {started} started, found {done}"),
            ));
        }
    }
    if let Some(c) = &window.server_cache
        && c.cached_tokens > c.looked_up_tokens
    {
        return Err(invalid(
            "server_cache.cached_tokens",
            format!(
                "expected at most the {} looked up, found {}",
                c.looked_up_tokens, c.cached_tokens
            ),
        ));
    }
    let mut last_turn = 0;
    for (i, d) in window.depths.iter().enumerate() {
        let at = |field: &str| format!("depths[{i}].{field}");
        if d.turn <= last_turn || d.turn > w.turns {
            return Err(invalid(
                &at("turn"),
                format!(
                    "expected a turn after {last_turn} and at most the workload's {} (depths in order)",
                    w.turns
                ),
            ));
        }
        last_turn = d.turn;
        if !measured && d.status != Status::OverCapacity {
            return Err(invalid(
                &at("status"),
                "expected over_capacity: the window is over capacity",
            ));
        }
        needs_reason(&at("reason"), d.status, d.reason.as_ref())?;
        for (field, v) in [
            ("per_session_tok_per_s", d.per_session_tok_per_s),
            ("cold_ttft_ms", d.cold_ttft_ms),
        ] {
            check_number(&at(field), v)?;
        }
        match (d.cold_prompts, d.cold_ttft_ms) {
            (Some(0), _) => {
                return Err(invalid(
                    &at("cold_prompts"),
                    "expected at least 1 (the prompts cold_ttft_ms is the median of)",
                ));
            }
            (Some(_), None) => {
                return Err(invalid(
                    &at("cold_prompts"),
                    "expected only with cold_ttft_ms, the median of those prompts",
                ));
            }
            _ => {}
        }
        figure_presence(
            &at("ttft_ms"),
            d.status,
            d.ttft_ms.is_some(),
            d.status.has_figures(),
        )?;
        if let (Some(c), Some(p)) = (d.cached_tokens, d.prompt_tokens)
            && c > p
        {
            return Err(invalid(
                &at("cached_tokens"),
                format!("expected at most the {p} prompt tokens, found {c}"),
            ));
        }
    }
    Ok(())
}

/// A reason wherever `status` is not Valid.
fn needs_reason(
    field: &str,
    status: Status,
    reason: Option<&crate::model::reason::Reason>,
) -> Result<(), Invalid> {
    if status != Status::Valid && reason.is_none_or(|r| r.words().trim().is_empty()) {
        return Err(invalid(
            field,
            format!(
                "expected why it is not Valid (status is {})",
                status.label()
            ),
        ));
    }
    Ok(())
}

/// Checks a paced point: a positive finite rate, a cap of at least 1, figures
/// only when Valid and a throughput then, a reason when Error, and the
/// requests adding up.
pub fn paced(point: &crate::model::paced::PacedPoint) -> Result<(), Invalid> {
    let rate = point.load.requested_per_s;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(invalid(
            "load.requested_per_s",
            format!(
                "expected a finite rate above 0 (an infinite rate is a burst, a decode cell), found {rate}"
            ),
        ));
    }
    if let crate::model::paced::Arrivals::Gamma { burstiness } = point.load.arrivals
        && !(burstiness.is_finite() && burstiness > 0.0)
    {
        return Err(invalid(
            "load.arrivals.burstiness",
            format!("expected a finite number above 0, found {burstiness}"),
        ));
    }
    if point.load.max_concurrency == Some(0) {
        return Err(invalid("load.max_concurrency", "expected at least 1"));
    }
    for (field, v) in [
        ("achieved_per_s", point.achieved_per_s),
        ("avg_in_flight", point.avg_in_flight),
        ("total_tok_per_s", point.total_tok_per_s),
        ("per_request_tok_per_s", point.per_request_tok_per_s),
        ("ttft_median_ms", point.ttft_median_ms),
        ("tbt_median_ms", point.tbt_median_ms),
        ("measured_s", point.measured_s),
    ] {
        check_number(field, v)?;
    }
    match point.status {
        Status::Valid => figure_presence(
            "total_tok_per_s",
            point.status,
            point.total_tok_per_s.is_some(),
            true,
        )?,
        Status::Error => {
            if point
                .reason
                .as_ref()
                .is_none_or(|r| r.words().trim().is_empty())
            {
                return Err(invalid(
                    "reason",
                    "expected why the point failed (status is error)",
                ));
            }
            figure_presence(
                "total_tok_per_s",
                point.status,
                point.total_tok_per_s.is_some(),
                false,
            )?;
        }
        other => {
            return Err(invalid(
                "status",
                format!("expected \"valid\" or \"error\" for a paced point, found {other:?}"),
            ));
        }
    }
    if let (Some(sent), Some(done), Some(failed)) = (
        point.sent_requests,
        point.completed_requests,
        point.failed_requests,
    ) && done + failed > sent
    {
        return Err(invalid(
            "sent_requests",
            format!("expected at least completed + failed ({done} + {failed}), found {sent}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::Status;
    use crate::model::sessions::{SessionDepth, SessionWindow, SessionWorkload};

    fn window(cold_ttft_ms: Option<f64>, cold_prompts: Option<u32>) -> SessionWindow {
        let workload = SessionWorkload {
            shared_prefix_tokens: 1024,
            user_tokens_per_turn: 128,
            answer_tokens: 64,
            turns: 1,
            think_time_ms: 0,
        };
        let mut w = SessionWindow::without_figures(workload, 1, 30.0, Status::Valid, None);
        w.total_tok_per_s = Some(100.0);
        let mut d = SessionDepth::without_figures(1, 1152, Status::Valid, None);
        d.turns = Some(1);
        d.ttft_ms = crate::model::slo::Quantiles::of(&[100.0]);
        (d.cold_ttft_ms, d.cold_prompts) = (cold_ttft_ms, cold_prompts);
        w.depths = vec![d];
        w
    }

    #[test]
    fn a_count_of_cold_prompts_needs_their_median_and_at_least_one() {
        super::sessions(&window(Some(50.0), Some(3))).unwrap();
        assert!(super::sessions(&window(Some(50.0), None)).is_ok());
        assert!(super::sessions(&window(None, None)).is_ok());
        let e = super::sessions(&window(None, Some(3))).unwrap_err();
        assert_eq!(e.field, "depths[0].cold_prompts", "{e:?}");
        assert!(e.message.contains("only with cold_ttft_ms"), "{e:?}");
        let e = super::sessions(&window(Some(50.0), Some(0))).unwrap_err();
        assert!(e.message.contains("at least 1"), "{e:?}");
    }
}
