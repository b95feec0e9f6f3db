//! The full measurement table, defined once.
//!
//! Each `Column` says its header on the page, its name in the CSV download,
//! the text a page shows for a cell, the value the page sorts by, the raw
//! value the CSV holds, and how each is read back into a cell. The run page,
//! the CSV export and the importers (published pages, CSV files) all go
//! through `COLUMNS`, so adding a figure is one entry here.

use crate::model::format::{self, DASH, ParseError};
use crate::model::reason::Reason;
use crate::model::{Cell, DecodeCell, PrefillCell, Status};

/// One column of the measurement table.
pub(crate) struct Column {
    /// Header on the page; `None` for a column only the CSV has.
    pub header: Option<&'static str>,
    /// Name in the CSV download.
    pub csv_name: &'static str,
    /// Shown on a run page only when some cell has a value: a figure the
    /// published pages do not have (their table stays as it was).
    pub optional: bool,
    /// In the published pages' table (the reference pages, and what the page
    /// importer reads). A column that is not is shown on a run page only
    /// when some cell has a value.
    pub published: bool,
    kind: Kind,
}

enum Kind {
    /// A number a cell may hold: shown with `show`, read back with `parse`,
    /// sorted by and exported as the number itself.
    Number {
        /// Where prefill cells keep it; `None` if they do not have it.
        prefill: Option<Field<PrefillCell>>,
        /// Where decode cells keep it.
        decode: Option<Field<DecodeCell>>,
        show: fn(f64) -> String,
        parse: fn(&str) -> Result<f64, ParseError>,
    },
    /// Anything else: each side written out.
    Other {
        show: fn(&Cell) -> String,
        sort_key: fn(&Cell) -> String,
        raw: fn(&Cell) -> String,
        read_shown: fn(&mut Cell, &str) -> Result<(), ParseError>,
        read_raw: fn(&mut Cell, &str) -> Result<(), ParseError>,
    },
}

/// One number field of a phase's cells, as a float.
struct Field<C> {
    get: fn(&C) -> Option<f64>,
    set: fn(&mut C, f64),
}

fn err(expected: &'static str, found: &str) -> ParseError {
    ParseError {
        expected,
        found: found.to_string(),
    }
}

fn count(text: &str) -> Result<f64, ParseError> {
    format::parse_count(text).map(|v| v as f64)
}

fn raw_number(text: &str) -> Result<f64, ParseError> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| err("a number", text))
}

fn raw_int(text: &str) -> Result<u64, ParseError> {
    text.parse().map_err(|_| err("a whole number", text))
}

fn throttle_of(cell: &Cell) -> Option<crate::model::Throttle> {
    match cell {
        Cell::Decode(d) => d.gpu_telemetry()?.throttle,
        Cell::Prefill(_) => None,
    }
}

/// Reads a throttle verdict written by `word` (its label or its code).
fn read_throttle(
    cell: &mut Cell,
    text: &str,
    word: fn(crate::model::Throttle) -> &'static str,
) -> Result<(), ParseError> {
    let text = text.trim();
    if text.is_empty() || text == DASH {
        return Ok(());
    }
    let t = crate::model::Throttle::ALL
        .into_iter()
        .find(|t| word(*t) == text)
        .ok_or_else(|| {
            err(
                "a throttle verdict (ok, power capped, thermal, hardware slowdown)",
                text,
            )
        })?;
    on_decode(cell, |d| d.gpu_telemetry_mut().throttle = Some(t))
}

/// Sets a field of a decode cell; a prefill cell does not have it.
fn on_decode(cell: &mut Cell, set: impl FnOnce(&mut DecodeCell)) -> Result<(), ParseError> {
    if let Cell::Decode(c) = cell {
        set(c)
    }
    Ok(())
}

/// A latency percentile only the CSV carries: `latency.$figure.$p`.
macro_rules! percentile_column {
    ($csv:literal, $figure:ident, $p:ident) => {
        Column {
            header: None,
            optional: true,
            published: false,
            csv_name: $csv,
            kind: Kind::Number {
                prefill: None,
                decode: Some(Field {
                    get: |d| d.latency.as_ref()?.$figure.as_ref()?.$p,
                    set: |d, v| {
                        d.latency
                            .get_or_insert_with(Default::default)
                            .$figure
                            .get_or_insert_with(Default::default)
                            .$p = Some(v)
                    },
                }),
                show: format::millis,
                parse: format::parse_millis,
            },
        }
    };
}

/// How many requests a latency's percentiles were taken over, CSV only.
macro_rules! requests_column {
    ($csv:literal, $figure:ident) => {
        Column {
            header: None,
            optional: true,
            published: false,
            csv_name: $csv,
            kind: Kind::Number {
                prefill: None,
                decode: Some(Field {
                    get: |d| Some(d.latency.as_ref()?.$figure.as_ref()?.requests? as f64),
                    set: |d, v| {
                        d.latency
                            .get_or_insert_with(Default::default)
                            .$figure
                            .get_or_insert_with(Default::default)
                            .requests = Some(v as u64)
                    },
                }),
                show: |v| format::count(v as u64),
                parse: count,
            },
        }
    };
}

/// Every column, in the CSV's order; the page shows those with a header.
pub(crate) static COLUMNS: [Column; 39] = [
    Column {
        header: Some("Phase"),
        optional: false,
        published: true,
        csv_name: "phase",
        kind: Kind::Other {
            show: |c| match c {
                Cell::Prefill(_) => "Prefill".into(),
                Cell::Decode(_) => "Sustained decode".into(),
            },
            sort_key: |c| match c {
                Cell::Prefill(_) => "0".into(),
                Cell::Decode(_) => "1".into(),
            },
            raw: |c| match c {
                Cell::Prefill(_) => "prefill".into(),
                Cell::Decode(_) => "decode".into(),
            },
            read_shown: |c, text| match text {
                "Prefill" => {
                    *c = Cell::Prefill(blank_prefill());
                    Ok(())
                }
                "Sustained decode" => {
                    *c = Cell::Decode(blank_decode());
                    Ok(())
                }
                _ => Err(err("a phase (Prefill or Sustained decode)", text)),
            },
            read_raw: |c, text| match text {
                "prefill" => {
                    *c = Cell::Prefill(blank_prefill());
                    Ok(())
                }
                "decode" => {
                    *c = Cell::Decode(blank_decode());
                    Ok(())
                }
                _ => Err(err("a phase (prefill or decode)", text)),
            },
        },
    },
    Column {
        header: Some("Context"),
        optional: false,
        published: true,
        csv_name: "context_tokens",
        kind: Kind::Other {
            show: |c| format::context_label(c.context_tokens()),
            sort_key: |c| c.context_tokens().to_string(),
            raw: |c| c.context_tokens().to_string(),
            read_shown: |c, text| set_context(c, format::parse_context_label(text)?),
            read_raw: |c, text| set_context(c, raw_int(text)?),
        },
    },
    Column {
        header: Some("Requests at once"),
        optional: false,
        published: true,
        csv_name: "concurrency",
        kind: Kind::Other {
            show: |c| concurrency(c).to_string(),
            sort_key: |c| concurrency(c).to_string(),
            raw: |c| concurrency(c).to_string(),
            read_shown: read_concurrency,
            read_raw: read_concurrency,
        },
    },
    Column {
        header: Some("Status"),
        optional: false,
        published: true,
        csv_name: "status",
        kind: Kind::Other {
            show: |c| c.status().label().into(),
            sort_key: |c| c.status().label().into(),
            raw: |c| c.status().code().into(),
            read_shown: |c, text| {
                let s = Status::from_label(text).ok_or_else(|| {
                    err(
                        "a status (Valid, Requests queued, Over capacity, Looped, Error)",
                        text,
                    )
                })?;
                set_status(c, s)
            },
            read_raw: |c, text| {
                let s = Status::ALL
                    .into_iter()
                    .find(|s| s.code() == text)
                    .ok_or_else(|| {
                        err(
                            "a status (valid, requests_queued, over_capacity, looped, error)",
                            text,
                        )
                    })?;
                set_status(c, s)
            },
        },
    },
    Column {
        // The published table has no reason; a run page shows it whenever a
        // cell has one, so no reason hides in a tooltip.
        header: Some("Reason"),
        optional: false,
        published: false,
        csv_name: "reason",
        kind: Kind::Other {
            show: |c| reason(c).map(Reason::words).unwrap_or_default(),
            sort_key: |_| String::new(),
            raw: |c| reason(c).map(Reason::words).unwrap_or_default(),
            read_shown: |_, _| Ok(()),
            read_raw: |c, text| {
                // The column holds words: they read back as a stated reason.
                let r = (!text.is_empty()).then(|| Reason::Stated(text.to_string()));
                match c {
                    Cell::Prefill(p) => p.reason = r,
                    Cell::Decode(d) => d.reason = r,
                }
                Ok(())
            },
        },
    },
    Column {
        header: Some("Total tok/s"),
        optional: false,
        published: true,
        csv_name: "total_tok_per_s",
        kind: Kind::Number {
            prefill: Some(Field {
                get: |p| p.prompt_tok_per_s,
                set: |p, v| p.prompt_tok_per_s = Some(v),
            }),
            decode: Some(Field {
                get: |d| d.total_tok_per_s,
                set: |d, v| d.total_tok_per_s = Some(v),
            }),
            show: format::tok_per_s,
            parse: format::parse_tok_per_s,
        },
    },
    Column {
        // The half width of total tok/s's 95% interval, relative: shown only
        // on runs whose cells have one (docs/measurement.md, "Noise").
        header: Some("± 95%"),
        optional: true,
        published: false,
        csv_name: "total_tok_per_s_ci95_pct",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| Some(d.total_noise()? * 100.0),
                set: |d, v| {
                    if let Some(t) = d.total_tok_per_s {
                        d.total_tok_per_s_ci95 = Some(crate::model::Interval::around(
                            t,
                            v / 100.0,
                            "as read from a measurement table",
                        ));
                    }
                },
            }),
            show: |v| format::plus_minus(v / 100.0),
            parse: |text| {
                let v = text
                    .trim()
                    .trim_start_matches('±')
                    .trim()
                    .trim_end_matches('%');
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err("a percentage such as ± 1.8%", text))
            },
        },
    },
    Column {
        header: Some("Per request tok/s"),
        optional: false,
        published: true,
        csv_name: "per_request_tok_per_s",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.per_request_tok_per_s,
                set: |d, v| d.per_request_tok_per_s = Some(v),
            }),
            show: format::tok_per_s,
            parse: format::parse_tok_per_s,
        },
    },
    Column {
        header: Some("TTFT"),
        optional: false,
        published: true,
        csv_name: "ttft_ms",
        kind: Kind::Number {
            prefill: Some(Field {
                get: |p| p.ttft_ms,
                set: |p, v| p.ttft_ms = Some(v),
            }),
            decode: Some(Field {
                get: |d| d.ttft_median_ms,
                set: |d, v| d.ttft_median_ms = Some(v),
            }),
            show: format::millis,
            parse: format::parse_millis,
        },
    },
    Column {
        header: Some("Time between tokens"),
        optional: false,
        published: true,
        csv_name: "tbt_ms",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.tbt_median_ms,
                set: |d, v| d.tbt_median_ms = Some(v),
            }),
            show: format::millis_tenths,
            parse: format::parse_millis,
        },
    },
    Column {
        header: Some("Longest pause"),
        optional: true,
        published: false,
        csv_name: "max_pause_ms",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.max_pause_ms,
                set: |d, v| d.max_pause_ms = Some(v),
            }),
            show: format::millis,
            parse: format::parse_millis,
        },
    },
    Column {
        header: Some("Average active requests"),
        optional: false,
        published: true,
        csv_name: "avg_active_requests",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.avg_active_requests,
                set: |d, v| d.avg_active_requests = Some(v),
            }),
            show: format::tenths,
            parse: format::parse_grouped,
        },
    },
    Column {
        header: Some("Completed requests"),
        optional: false,
        published: true,
        csv_name: "completed_requests",
        kind: Kind::Other {
            // One cold prompt per context: a prefill completed if it is Valid.
            show: |c| match c {
                Cell::Prefill(p) => prefill_completed(p).into(),
                Cell::Decode(d) => d.completed_requests.map_or(DASH.into(), format::count),
            },
            sort_key: |c| match c {
                Cell::Prefill(p) => prefill_completed(p).into(),
                Cell::Decode(d) => d
                    .completed_requests
                    .map_or(String::new(), |v| v.to_string()),
            },
            raw: |c| match c {
                Cell::Prefill(_) => String::new(),
                Cell::Decode(d) => d
                    .completed_requests
                    .map_or(String::new(), |v| v.to_string()),
            },
            read_shown: |c, text| {
                let v = format::parse_optional(text, format::parse_count)?;
                on_decode(c, |d| d.completed_requests = v)
            },
            read_raw: |c, text| {
                let v = optional_raw(text, raw_int)?;
                on_decode(c, |d| d.completed_requests = v)
            },
        },
    },
    Column {
        header: Some("Output tokens"),
        optional: false,
        published: true,
        csv_name: "output_tokens",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.output_tokens.map(|v| v as f64),
                set: |d, v| d.output_tokens = Some(v as u64),
            }),
            show: |v| format::count(v as u64),
            parse: count,
        },
    },
    Column {
        header: Some("Measured for"),
        optional: false,
        published: true,
        csv_name: "measured_s",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.measured_s,
                set: |d, v| d.measured_s = Some(v),
            }),
            show: format::seconds,
            parse: format::parse_seconds,
        },
    },
    Column {
        // Mean total power of the server's GPUs over the window (docs/measurement.md, "Energy").
        header: Some("GPU power"),
        optional: true,
        published: false,
        csv_name: "gpu_power_w",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.gpu_telemetry()?.power_w_mean,
                set: |d, v| d.gpu_telemetry_mut().power_w_mean = Some(v),
            }),
            show: format::watts,
            parse: |t| format::parse_with_unit(t, "W"),
        },
    },
    Column {
        // The GPUs' energy over the window / its output tokens.
        header: Some("Energy / output token"),
        optional: true,
        published: false,
        csv_name: "joules_per_output_token",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.joules_per_output_token(),
                set: |d, v| d.gpu_telemetry_mut().joules_per_output_token = Some(v),
            }),
            show: format::joules,
            parse: |t| format::parse_with_unit(t, "J"),
        },
    },
    Column {
        // The worst clock-event reason the GPUs reported during the window.
        header: Some("Throttle"),
        optional: true,
        published: false,
        csv_name: "throttle",
        kind: Kind::Other {
            show: |c| throttle_of(c).map_or(DASH.into(), |t| t.label().into()),
            sort_key: |c| throttle_of(c).map_or(String::new(), |t| (t as u8).to_string()),
            raw: |c| throttle_of(c).map_or(String::new(), |t| t.code().into()),
            read_shown: |c, text| read_throttle(c, text, crate::model::Throttle::label),
            read_raw: |c, text| read_throttle(c, text, crate::model::Throttle::code),
        },
    },
    Column {
        // The server's KV-cache usage at its highest in the window, in percent.
        header: Some("KV cache peak"),
        optional: true,
        published: false,
        csv_name: "kv_cache_peak",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.server_counters()?.kv_cache_usage_max.map(|v| v * 100.0),
                set: |d, v| d.server_counters_mut().kv_cache_usage_max = Some(v / 100.0),
            }),
            show: |v| format::share(v / 100.0),
            parse: |t| format::parse_with_unit(t, "%"),
        },
    },
    Column {
        // Most requests the server held waiting at once (its own count).
        header: Some("Waiting peak"),
        optional: true,
        published: false,
        csv_name: "waiting_peak",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.server_counters()?.waiting_max,
                set: |d, v| d.server_counters_mut().waiting_max = Some(v),
            }),
            show: format::trim_number,
            parse: format::parse_grouped,
        },
    },
    Column {
        // Requests the server preempted (or retracted) during the window.
        header: Some("Preemptions"),
        optional: true,
        published: false,
        csv_name: "preemptions",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.server_counters()?.preemptions.map(|v| v as f64),
                set: |d, v| d.server_counters_mut().preemptions = Some(v as u64),
            }),
            show: |v| format::count(v as u64),
            parse: count,
        },
    },
    Column {
        // Draft tokens the server accepted under speculative decoding, in percent.
        header: Some("Spec. acceptance"),
        optional: true,
        published: false,
        csv_name: "spec_acceptance_rate",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.server_counters()?.spec_acceptance_rate.map(|v| v * 100.0),
                set: |d, v| d.server_counters_mut().spec_acceptance_rate = Some(v / 100.0),
            }),
            show: |v| format::share(v / 100.0),
            parse: |t| format::parse_with_unit(t, "%"),
        },
    },
    Column {
        // Mean tokens a decode step produced under speculative decoding.
        header: Some("Spec. accept length"),
        optional: true,
        published: false,
        csv_name: "spec_accept_length",
        kind: Kind::Number {
            prefill: None,
            decode: Some(Field {
                get: |d| d.server_counters()?.spec_accept_length,
                set: |d, v| d.server_counters_mut().spec_accept_length = Some(v),
            }),
            show: |v| format::grouped(v, 2),
            parse: format::parse_grouped,
        },
    },
    Column {
        header: None,
        optional: false,
        published: true,
        csv_name: "prompt_tokens",
        kind: Kind::Number {
            prefill: Some(Field {
                get: |p| p.prompt_tokens.map(|v| v as f64),
                set: |p, v| p.prompt_tokens = Some(v as u64),
            }),
            // A decode cell keeps it in its raw detail, which a CSV row does
            // not carry: it is exported, not read back.
            decode: Some(Field {
                get: |d| {
                    d.detail
                        .as_ref()
                        .and_then(|x| x.prompt_tokens)
                        .map(|v| v as f64)
                },
                set: |_, _| {},
            }),
            show: |v| format::count(v as u64),
            parse: count,
        },
    },
    // Latency percentiles with the requests behind them (model::slo), as
    // measured or as an importer's file stated them: what a latency budget
    // is judged on. Medians of TTFT and time between tokens are above.
    // The CSV only: the page's table already fills a wide screen, and the
    // capacity table names a percentile taken over too few requests.
    percentile_column!("ttft_p90_ms", ttft_ms, p90),
    percentile_column!("ttft_p95_ms", ttft_ms, p95),
    percentile_column!("ttft_p99_ms", ttft_ms, p99),
    requests_column!("ttft_requests", ttft_ms),
    percentile_column!("tpot_p50_ms", tpot_ms, p50),
    percentile_column!("tpot_p90_ms", tpot_ms, p90),
    percentile_column!("tpot_p95_ms", tpot_ms, p95),
    percentile_column!("tpot_p99_ms", tpot_ms, p99),
    requests_column!("tpot_requests", tpot_ms),
    percentile_column!("tbt_p90_ms", tbt_ms, p90),
    percentile_column!("tbt_p99_ms", tbt_ms, p99),
    percentile_column!("e2e_p50_ms", e2e_ms, p50),
    percentile_column!("e2e_p90_ms", e2e_ms, p90),
    percentile_column!("e2e_p99_ms", e2e_ms, p99),
    requests_column!("e2e_requests", e2e_ms),
];

fn blank_prefill() -> PrefillCell {
    PrefillCell {
        context_tokens: 0,
        status: Status::Valid,
        reason: None,
        prompt_tokens: None,
        prompt_tokens_from: None,
        prompt_tok_per_s: None,
        ttft_ms: None,
        prompt_cache: None,
        measured_by: None,
    }
}

fn blank_decode() -> DecodeCell {
    DecodeCell::without_figures(0, 1, Status::Valid, None)
}

fn concurrency(c: &Cell) -> u32 {
    match c {
        Cell::Prefill(_) => 1,
        Cell::Decode(d) => d.concurrency,
    }
}

fn read_concurrency(c: &mut Cell, text: &str) -> Result<(), ParseError> {
    let n: u32 = text
        .parse()
        .map_err(|_| err("a whole number of requests", text))?;
    on_decode(c, |d| d.concurrency = n)
}

fn set_context(c: &mut Cell, tokens: u64) -> Result<(), ParseError> {
    match c {
        Cell::Prefill(p) => p.context_tokens = tokens,
        Cell::Decode(d) => d.context_tokens = tokens,
    }
    Ok(())
}

fn set_status(c: &mut Cell, s: Status) -> Result<(), ParseError> {
    match c {
        Cell::Prefill(p) => p.status = s,
        Cell::Decode(d) => d.status = s,
    }
    Ok(())
}

fn reason(c: &Cell) -> Option<&Reason> {
    match c {
        Cell::Prefill(p) => p.reason.as_ref(),
        Cell::Decode(d) => d.reason.as_ref(),
    }
}

fn prefill_completed(p: &PrefillCell) -> &'static str {
    if p.status == Status::Valid { "1" } else { "0" }
}

fn optional_raw<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<Option<T>, ParseError> {
    if text.is_empty() {
        Ok(None)
    } else {
        parse(text).map(Some)
    }
}

impl Kind {
    /// A number column's value in `cell`.
    /// Whether the cell has something to show in this column.
    fn has_value(&self, cell: &Cell) -> bool {
        match self {
            Kind::Number { .. } => self.number(cell).is_some(),
            Kind::Other { raw, .. } => !raw(cell).is_empty(),
        }
    }

    fn number(&self, cell: &Cell) -> Option<f64> {
        let Kind::Number {
            prefill, decode, ..
        } = self
        else {
            return None;
        };
        match cell {
            Cell::Prefill(p) => prefill.as_ref().and_then(|f| (f.get)(p)),
            Cell::Decode(d) => decode.as_ref().and_then(|f| (f.get)(d)),
        }
    }

    /// Sets a number column's value in `cell`, if its phase has the figure.
    fn set_number(&self, cell: &mut Cell, v: f64) {
        if let Kind::Number {
            prefill, decode, ..
        } = self
        {
            match cell {
                Cell::Prefill(p) => prefill.iter().for_each(|f| (f.set)(p, v)),
                Cell::Decode(d) => decode.iter().for_each(|f| (f.set)(d, v)),
            }
        }
    }
}

impl Column {
    /// The text a page shows for `cell` (a dash for a missing number).
    pub fn shown(&self, cell: &Cell) -> String {
        match &self.kind {
            Kind::Number { show, .. } => self.kind.number(cell).map_or(DASH.into(), show),
            Kind::Other { show, .. } => show(cell),
        }
    }

    /// The value a page sorts `cell` by ("" for none).
    pub(crate) fn sort_key(&self, cell: &Cell) -> String {
        match &self.kind {
            Kind::Number { .. } => self.raw(cell),
            Kind::Other { sort_key, .. } => sort_key(cell),
        }
    }

    /// The raw value the CSV holds for `cell` ("" for none).
    pub fn raw(&self, cell: &Cell) -> String {
        match &self.kind {
            Kind::Number { .. } => self
                .kind
                .number(cell)
                .map_or(String::new(), |v| v.to_string()),
            Kind::Other { raw, .. } => raw(cell),
        }
    }

    /// Reads the text a page shows into `cell`. Columns a phase does not
    /// have are left alone: the importer checks the row shows again as read.
    pub(crate) fn read_shown(&self, cell: &mut Cell, text: &str) -> Result<(), ParseError> {
        match &self.kind {
            Kind::Number { parse, .. } => {
                if let Some(v) = format::parse_optional(text, parse)? {
                    self.kind.set_number(cell, v);
                }
                Ok(())
            }
            Kind::Other { read_shown, .. } => read_shown(cell, text),
        }
    }

    /// Reads a CSV value into `cell`.
    pub(crate) fn read_raw(&self, cell: &mut Cell, text: &str) -> Result<(), ParseError> {
        match &self.kind {
            Kind::Number { .. } => {
                if let Some(v) = optional_raw(text, raw_number)? {
                    self.kind.set_number(cell, v);
                }
                Ok(())
            }
            Kind::Other { read_raw, .. } => read_raw(cell, text),
        }
    }
}

/// The columns of the published pages' table, in order.
/// A decode cell's number in the column `csv_name`, as the table holds it;
/// `None` for a column that is not a decode cell's number.
pub(crate) fn decode_value(csv_name: &str, cell: &DecodeCell) -> Option<f64> {
    COLUMNS
        .iter()
        .find(|c| c.csv_name == csv_name)
        .and_then(|c| match &c.kind {
            Kind::Number {
                decode: Some(field),
                ..
            } => (field.get)(cell),
            _ => None,
        })
}

pub(crate) fn page_columns() -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(|c| c.header.is_some() && c.published)
}

/// The columns a run page of `cells` shows: the published table's, and each
/// other one that some cell has a value for.
pub(crate) fn run_page_columns(cells: &[Cell]) -> Vec<&'static Column> {
    COLUMNS
        .iter()
        .filter(|c| c.header.is_some())
        .filter(|c| c.published || cells.iter().any(|cell| c.kind.has_value(cell)))
        .collect()
}

/// The page's headers.
/// The page's name of the column stored as `csv_name`, e.g. "Total tok/s"
/// for `total_tok_per_s`: how a figure is named wherever it is explained.
pub(crate) fn label_of(csv_name: &str) -> Option<&'static str> {
    COLUMNS
        .iter()
        .find(|c| c.csv_name == csv_name)
        .map(|c| c.header.unwrap_or(c.csv_name))
}

pub(crate) fn page_headers() -> Vec<&'static str> {
    page_columns().filter_map(|c| c.header).collect()
}

/// One row of the page's table: the text of each column.
pub(crate) fn page_row(cell: &Cell) -> Vec<String> {
    page_columns().map(|c| c.shown(cell)).collect()
}

/// A cell read from the texts of a page's row, one per page column. The
/// error names the column's header.
pub(crate) fn read_page_row(texts: &[&str]) -> Result<Cell, (&'static str, ParseError)> {
    let mut cell = Cell::Decode(blank_decode());
    for (column, text) in page_columns().zip(texts) {
        column
            .read_shown(&mut cell, text)
            .map_err(|e| (column.header.unwrap_or(column.csv_name), e))?;
    }
    Ok(cell)
}

/// The CSV download's last column when data/prices.json prices the run's
/// GPU: derived from total tok/s and the price, so importing ignores it.
pub(crate) const COST_CSV_NAME: &str = "usd_per_million_output_tokens";

/// The CSV download's last column when data/prices.json prices a kWh and
/// the run recorded energy: derived, so importing ignores it.
pub(crate) const ELECTRICITY_CSV_NAME: &str = "electricity_usd_per_million_output_tokens";

/// The columns a CSV header names: every column of `COLUMNS` in order,
/// where an optional one may be missing (a file exported before it existed),
/// and the derived cost and electricity columns may close it.
pub(crate) fn csv_columns(header: &[&str]) -> Option<Vec<&'static Column>> {
    // The derived columns that may close it, each at most once, in order.
    let mut header = header;
    for derived in [ELECTRICITY_CSV_NAME, COST_CSV_NAME] {
        if let Some((last, rest)) = header.split_last()
            && *last == derived
        {
            header = rest;
        }
    }
    let mut names = header.iter().peekable();
    let mut columns = Vec::new();
    for column in &COLUMNS {
        if names.peek() == Some(&&column.csv_name) {
            names.next();
            columns.push(column);
        } else if !column.optional {
            return None;
        }
    }
    names.next().is_none().then_some(columns)
}

/// A cell read from a CSV row's values, one per column of `columns`. The
/// error names the column's CSV name.
pub(crate) fn read_csv_row<'a>(
    columns: &[&'static Column],
    values: impl IntoIterator<Item = &'a str>,
) -> Result<Cell, (&'static str, ParseError)> {
    let mut cell = Cell::Decode(blank_decode());
    for (column, value) in columns.iter().zip(values) {
        column
            .read_raw(&mut cell, value)
            .map_err(|e| (column.csv_name, e))?;
    }
    Ok(cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode() -> Cell {
        Cell::Decode(DecodeCell {
            total_tok_per_s: Some(1412.4),
            per_request_tok_per_s: Some(117.7),
            ttft_median_ms: Some(433.2),
            tbt_median_ms: Some(8.5),
            avg_active_requests: Some(11.9),
            completed_requests: Some(12),
            output_tokens: Some(42_372),
            measured_s: Some(30.0),
            ..DecodeCell::without_figures(
                8192,
                12,
                Status::RequestsQueued,
                Some(Reason::Stated("q".into())),
            )
        })
    }

    #[test]
    fn a_row_shows_sorts_and_exports_each_figure_in_its_column() {
        let c = decode();
        assert_eq!(
            page_row(&c),
            [
                "Sustained decode",
                "8K",
                "12",
                "Requests queued",
                "1,412.4",
                "117.7",
                "433 ms",
                "8.5 ms",
                "11.9",
                "12",
                "42,372",
                "30.0 s"
            ]
        );
        let keys: Vec<String> = page_columns().map(|col| col.sort_key(&c)).collect();
        assert_eq!(keys[0], "1");
        assert_eq!(keys[3], "Requests queued");
        assert_eq!(keys[4], "1412.4");
        let raw: Vec<String> = COLUMNS.iter().map(|col| col.raw(&c)).collect();
        assert_eq!(raw[3], "requests_queued");
        assert_eq!(raw[4], "q");
        assert_eq!(raw[10], "", "no pause figure");
        assert_eq!(raw[15], "");
    }

    #[test]
    fn a_page_row_reads_back_into_the_cell_it_shows() {
        let c = decode();
        let texts = page_row(&c);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut read = read_page_row(&refs).unwrap();
        // The page does not show the reason; everything else reads back.
        if let Cell::Decode(d) = &mut read {
            d.reason = Some(Reason::Stated("q".into()));
            // Shown rounded: 433 ms.
            d.ttft_median_ms = Some(433.2);
        }
        assert_eq!(read, c);
        let (column, e) = read_page_row(&["Sustained decode", "8K", "x"]).unwrap_err();
        assert_eq!(column, "Requests at once");
        assert_eq!(e.found, "x");
    }

    #[test]
    fn a_csv_row_reads_back_exactly() {
        for c in [
            decode(),
            Cell::Prefill(PrefillCell {
                context_tokens: 16_384,
                status: Status::Valid,
                reason: None,
                prompt_tokens: Some(16_384),
                prompt_tokens_from: None,
                prompt_tok_per_s: Some(18_900.5),
                ttft_ms: Some(866.9),
                prompt_cache: None,
                measured_by: None,
            }),
        ] {
            let raw: Vec<String> = COLUMNS.iter().map(|col| col.raw(&c)).collect();
            let all: Vec<&Column> = COLUMNS.iter().collect();
            let read = read_csv_row(&all, raw.iter().map(String::as_str)).unwrap();
            assert_eq!(read, c);
        }
    }

    /// A cell whose TTFT p99 rests on 40 requests and TPOT p99 on 700.
    fn with_latency() -> Cell {
        use crate::model::slo::{Latency, Quantiles};
        let Cell::Decode(mut d) = decode() else {
            unreachable!()
        };
        let q = |p50: f64, p99: f64, n: u64| Quantiles {
            p50: Some(p50),
            p90: Some(p99 * 0.8),
            p95: Some(p99 * 0.9),
            p99: Some(p99),
            requests: Some(n),
        };
        d.latency = Some(Box::new(Latency {
            ttft_ms: Some(Quantiles {
                // The median is the cell's own (the TTFT column).
                p50: None,
                ..q(0.0, 1234.0, 40)
            }),
            tpot_ms: Some(q(20.0, 61.5, 700)),
            tbt_ms: Some(Quantiles {
                p50: None,
                p95: None,
                requests: None,
                ..q(0.0, 30.0, 0)
            }),
            e2e_ms: Some(Quantiles {
                p95: None,
                ..q(9000.0, 15000.0, 12)
            }),
        }));
        Cell::Decode(d)
    }

    #[test]
    fn latency_percentiles_read_back_from_the_csv_and_stay_off_the_page() {
        let c = with_latency();
        let raw: Vec<String> = COLUMNS.iter().map(|col| col.raw(&c)).collect();
        let all: Vec<&Column> = COLUMNS.iter().collect();
        assert_eq!(
            read_csv_row(&all, raw.iter().map(String::as_str)).unwrap(),
            c
        );
        let at = |name: &str| {
            let i = COLUMNS.iter().position(|col| col.csv_name == name).unwrap();
            raw[i].clone()
        };
        assert_eq!(
            (at("ttft_p99_ms"), at("ttft_requests")),
            ("1234".into(), "40".into())
        );
        assert_eq!(at("e2e_p90_ms"), "12000", "p99 × 0.8");
        assert_eq!(at("tbt_p90_ms"), "24");
        assert_eq!(
            run_page_columns(std::slice::from_ref(&c)).len(),
            run_page_columns(&[decode()]).len()
        );
    }
}
