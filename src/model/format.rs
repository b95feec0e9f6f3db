//! Display formats of numbers and labels, and their inverses.
//!
//! The formats are those of the published "Speed test matrix" pages: the
//! renderer uses `format_*`, the page ingester uses `parse_*` to read the same
//! strings back. Pure functions, tested directly below.

/// Shown where a cell has no value.
pub const DASH: &str = "—";

/// Tokens in "1K" of context: 8K = 8,192 tokens.
pub(crate) const TOKENS_PER_K: u64 = 1024;

/// Throughputs at or above this are written in thousands ("18.9K").
const COMPACT_FROM: f64 = 10_000.0;

/// `value` with `decimals` decimals and thousands separators: 1412.44 -> "1,412.4".
///
/// The one rounding rule of every figure shown (docs/measurement.md): the
/// value × 10^decimals rounded to the nearest integer, halves away from zero,
/// so 2.5 reads "3" and 450/400 reads "1.13". static/compare.js `grouped`
/// does the same operations, and tests/browser_conformance.rs holds it to this.
pub(crate) fn grouped(value: f64, decimals: usize) -> String {
    let scaled = (value.abs() * 10f64.powi(decimals as i32)).round();
    // "-0.0" is not a useful thing to show.
    let negative = value < 0.0 && scaled > 0.0;
    // An integral f64 below 2^64 is exactly that u64, whose digits itoa
    // writes on the stack: a page shows thousands of figures, and the float
    // formatter's exact path and a string per step cost more than the rest
    // of a figure's rendering.
    if scaled < u64::MAX as f64 {
        grouped_digits(
            itoa::Buffer::new().format(scaled as u64).as_bytes(),
            decimals,
            negative,
        )
    } else {
        grouped_digits(format!("{scaled:.0}").as_bytes(), decimals, negative)
    }
}

/// `digits` (ASCII) zero-padded to at least `decimals + 1`, the last
/// `decimals` after a point, the rest grouped by threes.
fn grouped_digits(digits: &[u8], decimals: usize, negative: bool) -> String {
    let width = digits.len().max(decimals + 1);
    let padding = width - digits.len();
    let int_len = width - decimals;
    let digit = |i: usize| {
        if i < padding {
            '0'
        } else {
            char::from(digits[i - padding])
        }
    };
    let mut out = String::with_capacity(width + int_len / 3 + 2);
    if negative {
        out.push('-');
    }
    for i in 0..int_len {
        if i > 0 && (int_len - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit(i));
    }
    if decimals > 0 {
        out.push('.');
        out.extend((int_len..width).map(digit));
    }
    out
}

/// Items in an English list: "a", "a and b", "a, b and c".
pub fn and_list<T: std::fmt::Display>(items: &[T]) -> String {
    listed(items, "and")
}

/// Items as alternatives: "a", "a or b", "a, b or c".
pub fn or_list<T: std::fmt::Display>(items: &[T]) -> String {
    listed(items, "or")
}

fn listed<T: std::fmt::Display>(items: &[T], last_word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(T::to_string).collect();
            format!("{} {last_word} {last}", init.join(", "))
        }
    }
}

/// A count with its noun: "1 run page", "2 run pages", "1,200 files".
pub fn counted(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", count(n as u64))
}

/// An integer count with separators: 5272 -> "5,272".
pub fn count(n: u64) -> String {
    grouped_digits(itoa::Buffer::new().format(n).as_bytes(), 0, false)
}

/// Thousands with one decimal, a trailing ".0" dropped: 18919 -> "18.9K", 35012 -> "35K".
fn compact_thousands(value: f64) -> String {
    let text = grouped(value / 1000.0, 1);
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}K")
}

/// Throughput in the measurement table: "175.8", "4,764.0", "18.9K".
pub fn tok_per_s(value: f64) -> String {
    // Decide on the rounded value, so 9,999.96 is "10K", not "10,000.0".
    if round_to(value, 1).abs() >= COMPACT_FROM {
        compact_thousands(value)
    } else {
        grouped(value, 1)
    }
}

/// Throughputs of one table column, in one format: all in thousands
/// ("4.8K", "18.9K") when the largest is written so, else as
/// [`tok_per_s`] writes them ("175.8", "4,764.0").
pub(crate) fn tok_per_s_column(values: &[f64]) -> Vec<String> {
    let compact = values.iter().any(|&v| round_to(v, 1).abs() >= COMPACT_FROM);
    values
        .iter()
        .map(|&v| {
            if compact {
                compact_thousands(v)
            } else {
                tok_per_s(v)
            }
        })
        .collect()
}

/// Throughput on a chart label: "4,764", "18.9K".
pub fn tok_per_s_short(value: f64) -> String {
    if value.abs().round() >= COMPACT_FROM {
        compact_thousands(value)
    } else {
        grouped(value, 0)
    }
}

/// A request rate in requests a second, as precise as it was given up to
/// thousandths and no more: 1.5 -> "1.5", 16 -> "16", 0.125 -> "0.125",
/// 1200 -> "1,200".
pub fn rate_per_s(value: f64) -> String {
    let text = grouped(value, 3);
    match text.split_once('.') {
        Some((whole, frac)) => match frac.trim_end_matches('0') {
            "" => whole.to_string(),
            frac => format!("{whole}.{frac}"),
        },
        None => text,
    }
}

/// A whole-millisecond latency: "13,540 ms".
pub fn millis(ms: f64) -> String {
    format!("{} ms", grouped(ms, 0))
}

/// A sub-millisecond-resolution latency: "5.6 ms".
pub(crate) fn millis_tenths(ms: f64) -> String {
    format!("{} ms", grouped(ms, 1))
}

/// A measured duration: "30.0 s".
pub fn seconds(s: f64) -> String {
    format!("{} s", grouped(s, 1))
}

/// A configured duration, decimals only when needed: "30 s", "2.5 s".
pub(crate) fn seconds_setting(s: f64) -> String {
    format!("{} s", trim_number(s))
}

/// Power: "3,164.5 W".
pub fn watts(w: f64) -> String {
    format!("{} W", grouped(w, 1))
}

/// Output tokens per joule, three significant figures: "0.541", "12.3".
pub fn tok_per_joule(v: f64) -> String {
    let decimals = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    grouped(v, decimals)
}

/// Energy per output token, three significant digits: "0.354 J", "12.3 J".
pub fn joules(j: f64) -> String {
    let decimals = match j.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        a if a >= 0.1 => 3,
        _ => 4,
    };
    format!("{} J", grouped(j, decimals))
}

/// A share of 0 to 1 as a percentage: 0.443 -> "44%".
pub fn share(v: f64) -> String {
    format!("{}%", grouped(v * 100.0, 0))
}

/// A number shown with a unit after it ("3,164.5 W", "44%"), read back.
pub(crate) fn parse_with_unit(text: &str, unit: &str) -> Result<f64, ParseError> {
    parse_grouped(text.trim().trim_end_matches(unit).trim())
}

/// A mean with one decimal: "56.4".
pub(crate) fn tenths(v: f64) -> String {
    grouped(v, 1)
}

/// A number without a trailing ".0": 141 -> "141", 79.5 -> "79.5".
pub(crate) fn trim_number(v: f64) -> String {
    if v.fract() == 0.0 {
        grouped(v, 0)
    } else {
        let t = grouped(v, 3);
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// "2026-11-30 12:00 UTC" of an RFC 3339 UTC time ("2026-11-30T12:00:00Z").
pub fn measured_at(rfc3339: &str) -> String {
    match rfc3339.get(..16) {
        Some(prefix) if rfc3339.len() >= 17 => format!("{} UTC", prefix.replacen('T', " ", 1)),
        _ => rfc3339.to_string(),
    }
}

/// Days since 1970-01-01 of an RFC 3339 time: where a run sits on a date axis.
pub(crate) fn epoch_days(rfc3339: &str) -> Option<f64> {
    let at = humantime::parse_rfc3339_weak(rfc3339).ok()?;
    let since = at.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(since.as_secs_f64() / SECONDS_PER_DAY)
}

/// The UTC date of a day number on a date axis: 20_422.7 -> "2025-11-30".
pub(crate) fn epoch_day_label(days: f64) -> String {
    let seconds = (days.max(0.0) * SECONDS_PER_DAY).round() as u64;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    let mut text = humantime::format_rfc3339_seconds(at).to_string();
    text.truncate("2025-11-30".len());
    text
}

const SECONDS_PER_DAY: f64 = 86_400.0;

/// Ticks for a date axis over day numbers `lo..=hi` whose labels fit in
/// `room` characters (each label and a 3-character gap): every 1, 2, 7 or
/// 14 days ("2026-10-14"), at month starts every 1, 2, 3 or 6 months
/// ("2026-10"), or at year starts ("2026"), the finest that fits.
pub(crate) fn date_ticks(lo: f64, hi: f64, room: usize) -> Vec<(f64, String)> {
    const GAP: usize = 3;
    let fits = |ticks: &[(f64, String)]| {
        ticks
            .iter()
            .map(|(_, label)| label.len() + GAP)
            .sum::<usize>()
            <= room
    };
    // No more ticks than the shortest labels ("2026") fit.
    let max = room / ("2026".len() + GAP);
    let day_of = |y: i64, m: i64| epoch_days(&format!("{y:04}-{m:02}-01T00:00:00Z"));
    let start = epoch_day_label(lo);
    let (y0, m0): (i64, i64) = (
        start[..4].parse().unwrap_or(1970),
        start[5..7].parse().unwrap_or(1),
    );
    let by_days = |step: f64| -> Vec<(f64, String)> {
        let first = (lo / step).ceil() * step;
        (0..)
            .map(|k| first + k as f64 * step)
            .take_while(|&d| d <= hi)
            .take(max + 1)
            .map(|d| (d, epoch_day_label(d)))
            .collect()
    };
    // Month starts from lo's month on, every `step` months, labelled by `label`.
    let by_months = |step: i64, label: fn(&str) -> String| -> Vec<(f64, String)> {
        (0..)
            .map(|k| (y0 * 12 + m0 - 1) + k)
            .filter(|months| months.rem_euclid(step) == 0)
            .filter_map(|months| day_of(months / 12, months % 12 + 1))
            .skip_while(|&d| d < lo)
            .take_while(|&d| d <= hi)
            .take(max + 1)
            .map(|d| (d, label(&epoch_day_label(d))))
            .collect()
    };
    let month = |date: &str| date[..7].to_string();
    let year = |date: &str| date[..4].to_string();
    let candidates = [1.0, 2.0, 7.0, 14.0]
        .into_iter()
        .map(by_days)
        .chain([1, 2, 3, 6].into_iter().map(|step| by_months(step, month)))
        .chain(
            [1, 2, 5, 10, 20]
                .into_iter()
                .map(|step| by_months(12 * step, year)),
        );
    let mut last = Vec::new();
    for ticks in candidates {
        if fits(&ticks) {
            return ticks;
        }
        last = ticks;
    }
    while !fits(&last) {
        last.pop();
    }
    last
}

/// Ticks at whole numbers (run numbers) over `lo..=hi` whose labels fit in
/// `room` characters (each label and a 3-character gap): every 1, 2, 5, 10,
/// 20, 50, ... the finest that fits, so no number is written twice.
pub(crate) fn whole_number_ticks(lo: f64, hi: f64, room: usize) -> Vec<(f64, String)> {
    const GAP: usize = 3;
    let first_at_least = |v: f64| v.max(1.0).ceil() as u64;
    let ticks_every = |step: u64| -> Vec<(f64, String)> {
        let values: Vec<u64> = if step <= 2 {
            // 1, 2, 3, ... or 1, 3, 5, ...: run 1 and every step after it.
            let first = first_at_least(lo);
            let first = first + (first + step - 1) % step;
            (first..)
                .step_by(step as usize)
                .take_while(|&v| v as f64 <= hi)
                .collect()
        } else {
            // Run 1, where the axis has it, then the multiples of the step.
            let first = first_at_least(lo).div_ceil(step) * step;
            let one = (lo <= 1.0).then_some(1);
            one.into_iter()
                .chain((first..).step_by(step as usize))
                .take_while(|&v| v as f64 <= hi)
                .collect()
        };
        values
            .into_iter()
            .map(|v| (v as f64, v.to_string()))
            .collect()
    };
    let fits =
        |ticks: &[(f64, String)]| ticks.iter().map(|(_, l)| l.len() + GAP).sum::<usize>() <= room;
    let mut step = 1u64;
    loop {
        let ticks = ticks_every(step);
        if fits(&ticks) || ticks.len() <= 1 {
            return ticks;
        }
        // 1, 2, 5, 10, 20, 50, ...
        step = match step.to_string().as_bytes()[0] {
            b'1' => step * 2,
            b'2' => step / 2 * 5,
            _ => step * 2,
        };
    }
}

/// A count's tick label (requests at once, a run's number): the whole
/// number, or nothing between whole numbers, where rounding would write a
/// place that is no count as one (2^-1 requests as "1", beside 2^0's "1").
pub fn count_tick(v: f64) -> String {
    if v >= 0.0 && (v - v.round()).abs() < 1e-6 {
        format!("{}", v.round())
    } else {
        String::new()
    }
}

/// How a context of 0 tokens (a decode cell with no prompt) is labelled.
pub(crate) const NO_PROMPT: &str = "0 (no prompt)";

/// Context length label: 8192 -> "8K", 1_043_456 -> "1019K", 1_048_576 -> "1024K".
/// A length that is not a whole number of K is written in tokens: "3,000".
pub fn context_label(tokens: u64) -> String {
    if tokens == 0 {
        NO_PROMPT.to_string()
    } else if tokens >= TOKENS_PER_K && tokens.is_multiple_of(TOKENS_PER_K) {
        format!("{}K", tokens / TOKENS_PER_K)
    } else {
        count(tokens)
    }
}

/// A decode cell by its context and requests at once: "8K × 128".
pub fn cell_label(context_tokens: u64, concurrency: u32) -> String {
    format!("{} × {concurrency}", context_label(context_tokens))
}

/// A list of labels with an en dash between the first and last: "8K–1019K".
pub(crate) fn range_label(first: &str, last: &str) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}–{last}")
    }
}

fn round_to(v: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (v * f).round() / f
}

// ---------------------------------------------------------------- parsing

/// Why a display string could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, found {found:?}")]
pub struct ParseError {
    pub expected: &'static str,
    pub found: String,
}

fn err(expected: &'static str, found: &str) -> ParseError {
    ParseError {
        expected,
        found: found.to_string(),
    }
}

/// Reads "1,412.4" or "5,272" (separators in groups of three) as a number.
pub(crate) fn parse_grouped(text: &str) -> Result<f64, ParseError> {
    const WHAT: &str = "a number like 1,412.4";
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text, None),
    };
    let groups: Vec<&str> = int_part.split(',').collect();
    let well_grouped = !groups[0].is_empty()
        && groups[0].len() <= 3
        && groups[1..].iter().all(|g| g.len() == 3)
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()));
    let frac_ok = frac_part.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    if !well_grouped || !frac_ok {
        return Err(err(WHAT, text));
    }
    let plain: String = text.chars().filter(|&c| c != ',').collect();
    plain.parse::<f64>().map_err(|_| err(WHAT, text))
}

/// Reads an integer count such as "5,272".
pub(crate) fn parse_count(text: &str) -> Result<u64, ParseError> {
    if text.contains('.') {
        return Err(err("a whole number like 5,272", text));
    }
    let plain: String = text.chars().filter(|&c| c != ',').collect();
    parse_grouped(text)?;
    plain
        .parse::<u64>()
        .map_err(|_| err("a whole number like 5,272", text))
}

/// Reads a throughput as [`tok_per_s`] or [`tok_per_s_short`] write it.
pub(crate) fn parse_tok_per_s(text: &str) -> Result<f64, ParseError> {
    match text.strip_suffix('K') {
        // "18.9e3" parses to exactly 18900.0, unlike 18.9 * 1000.0.
        Some(thousands) => {
            parse_grouped(thousands)
                .map_err(|_| err("a throughput like 18.9K or 4,764.0", text))?;
            let plain: String = thousands.chars().filter(|&c| c != ',').collect();
            format!("{plain}e3")
                .parse::<f64>()
                .map_err(|_| err("a throughput like 18.9K", text))
        }
        None => parse_grouped(text).map_err(|_| err("a throughput like 18.9K or 4,764.0", text)),
    }
}

/// Reads "13,540 ms" or "5.6 ms".
pub(crate) fn parse_millis(text: &str) -> Result<f64, ParseError> {
    text.strip_suffix(" ms")
        .ok_or_else(|| err("a latency like 433 ms", text))
        .and_then(|n| parse_grouped(n).map_err(|_| err("a latency like 433 ms", text)))
}

/// Reads "30.0 s" or "30 s".
pub(crate) fn parse_seconds(text: &str) -> Result<f64, ParseError> {
    text.strip_suffix(" s")
        .ok_or_else(|| err("a duration like 30.0 s", text))
        .and_then(|n| parse_grouped(n).map_err(|_| err("a duration like 30.0 s", text)))
}

/// Reads a context label ("8K", "1019K", "3,000") back into tokens.
pub fn parse_context_label(text: &str) -> Result<u64, ParseError> {
    const WHAT: &str = "a context length like 8K";
    if text == NO_PROMPT {
        return Ok(0);
    }
    match text.strip_suffix('K') {
        Some(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => k
            .parse::<u64>()
            .ok()
            .and_then(|k| k.checked_mul(TOKENS_PER_K))
            .ok_or_else(|| err(WHAT, text)),
        Some(_) => Err(err(WHAT, text)),
        None => parse_count(text).map_err(|_| err(WHAT, text)),
    }
}

/// `None` for the dash shown in place of a missing value, else `parse(text)`.
pub(crate) fn parse_optional<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<Option<T>, ParseError> {
    if text == DASH {
        Ok(None)
    } else {
        parse(text).map(Some)
    }
}

/// "± 1.8%": a relative half width (0.018) as pages write an interval.
pub fn plus_minus(relative: f64) -> String {
    format!("± {}%", grouped(relative * 100.0, 1))
}

/// "1.13×": a ratio to two decimals, by the rounding rule of `grouped`
/// (450/400 reads 1.13×, 0.625 reads 0.63×).
pub fn ratio(r: f64) -> String {
    format!("{}×", grouped(r, 2))
}

/// "$0.39": dollars to the cent, or to a tenth of a cent below ten cents.
pub(crate) fn usd(v: f64) -> String {
    if v < 0.1 {
        format!("${}", grouped(v, 3))
    } else {
        format!("${}", grouped(v, 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_rates_keep_the_precision_they_were_given() {
        for (v, want) in [
            (1.5, "1.5"),
            (16.0, "16"),
            (0.125, "0.125"),
            (1200.0, "1,200"),
            (2.0 / 3.0, "0.667"),
        ] {
            assert_eq!(rate_per_s(v), want, "{v}");
        }
    }

    #[test]
    fn table_throughput_formats_of_the_reference_pages() {
        assert_eq!(tok_per_s(175.8), "175.8");
        assert_eq!(tok_per_s(1412.4), "1,412.4");
        assert_eq!(tok_per_s(4764.0), "4,764.0");
        assert_eq!(tok_per_s(18_919.0), "18.9K");
        assert_eq!(tok_per_s(35_012.0), "35K");
        assert_eq!(tok_per_s(20_000.0), "20K");
        assert_eq!(tok_per_s(0.04), "0.0");
    }

    #[test]
    fn throughput_switches_to_thousands_on_the_rounded_value() {
        assert_eq!(tok_per_s(9_999.94), "9,999.9");
        assert_eq!(tok_per_s(9_999.95), "10K");
        assert_eq!(tok_per_s(10_000.0), "10K");
        assert_eq!(tok_per_s(10_049.0), "10K");
        assert_eq!(tok_per_s(10_050.0), "10.1K");
        assert_eq!(tok_per_s(99_960.0), "100K");
        assert_eq!(tok_per_s(1_234_567.0), "1,234.6K");
        assert_eq!(tok_per_s_short(9_999.4), "9,999");
        assert_eq!(tok_per_s_short(9_999.5), "10K");
        assert_eq!(tok_per_s_short(4_764.0), "4,764");
        assert_eq!(tok_per_s_short(18_900.0), "18.9K");
    }

    #[test]
    fn one_rounding_rule_halves_away_from_zero() {
        assert_eq!(grouped(2.5, 0), "3");
        assert_eq!(grouped(3.5, 0), "4");
        assert_eq!(grouped(0.125, 2), "0.13");
        assert_eq!(grouped(-2.5, 0), "-3");
        assert_eq!(ratio(450.0 / 400.0), "1.13×");
        assert_eq!(ratio(250.0 / 400.0), "0.63×");
        assert_eq!(ratio(0.15625), "0.16×");
        assert_eq!(tok_per_s_short(12_250.0), "12.3K");
        // The product is rounded, not the decimal written: 1.005 is
        // 1.00499999999999989... and × 100 gives 100.49999999999999.
        assert_eq!(ratio(1.005), "1.00×");
    }

    /// `grouped` as it was first written, one string per step: the
    /// stack-buffer version must write the same text for every value.
    fn grouped_by_strings(value: f64, decimals: usize) -> String {
        let scaled = (value.abs() * 10f64.powi(decimals as i32)).round();
        let digits = if scaled < u64::MAX as f64 {
            (scaled as u64).to_string()
        } else {
            format!("{scaled:.0}")
        };
        let digits = format!("{digits:0>width$}", width = decimals + 1);
        let (int_part, frac_part) = digits.split_at(digits.len() - decimals);
        let mut out = String::new();
        if value < 0.0 && scaled > 0.0 {
            out.push('-');
        }
        let mut int_grouped = String::new();
        for (i, ch) in int_part.chars().enumerate() {
            if i > 0 && (int_part.len() - i).is_multiple_of(3) {
                int_grouped.push(',');
            }
            int_grouped.push(ch);
        }
        out.push_str(&int_grouped);
        if decimals > 0 {
            out.push('.');
            out.push_str(frac_part);
        }
        out
    }

    #[test]
    fn grouped_writes_what_the_string_by_string_version_wrote() {
        let mut values = vec![
            0.0,
            -0.0,
            0.004,
            0.5,
            0.9995,
            999.95,
            1_000.0,
            123_456.789,
            1e15,
            1.8e19,
            u64::MAX as f64,
            1e20,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        // A sweep over magnitudes, with fractions that round either way.
        let mut v = 0.000_123_4;
        while v < 1e22 {
            values.push(v);
            values.push(v * 1.5 + 0.05);
            v *= 7.3;
        }
        values.extend(values.clone().iter().map(|v| -v));
        for &v in &values {
            for decimals in 0..=4 {
                assert_eq!(
                    grouped(v, decimals),
                    grouped_by_strings(v, decimals),
                    "{v} to {decimals} decimals"
                );
            }
        }
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(123), "123");
    }

    #[test]
    fn latency_duration_and_count_formats() {
        assert_eq!(millis(13_540.0), "13,540 ms");
        assert_eq!(millis(433.0), "433 ms");
        assert_eq!(millis(999.5), "1,000 ms");
        assert_eq!(millis(44.4), "44 ms");
        assert_eq!(millis_tenths(5.6), "5.6 ms");
        assert_eq!(millis_tenths(5.65), "5.7 ms"); // 5.65 is 5.6500000000000004 in binary
        assert_eq!(millis_tenths(1234.56), "1,234.6 ms");
        assert_eq!(seconds(30.0), "30.0 s");
        assert_eq!(seconds(29.94), "29.9 s");
        assert_eq!(seconds_setting(30.0), "30 s");
        assert_eq!(seconds_setting(2.5), "2.5 s");
        assert_eq!(count(5_272), "5,272");
        assert_eq!(count(140_160), "140,160");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(counted(1, "run page"), "1 run page");
        assert_eq!(counted(0, "file"), "0 files");
        assert_eq!(tenths(56.4), "56.4");
        assert_eq!(tenths(1.0), "1.0");
        assert_eq!(trim_number(141.0), "141");
        assert_eq!(trim_number(79.5), "79.5");
        assert_eq!(grouped(-1234.5, 1), "-1,234.5");
        assert_eq!(grouped(-0.01, 1), "0.0");
    }

    #[test]
    fn measured_at_is_shown_to_the_minute_in_utc() {
        assert_eq!(measured_at("2026-11-30T12:05:09Z"), "2026-11-30 12:05 UTC");
        assert_eq!(
            measured_at("2026-11-30T12:05:09.123Z"),
            "2026-11-30 12:05 UTC"
        );
    }

    #[test]
    fn dates_become_day_numbers_and_back() {
        assert_eq!(epoch_days("1970-01-02T00:00:00Z"), Some(1.0));
        assert_eq!(epoch_days("2025-11-30T12:00:00Z"), Some(20_422.5));
        assert_eq!(
            epoch_days("2025-11-30T12:00:00.5Z").map(|d| d > 20_422.5),
            Some(true)
        );
        assert_eq!(epoch_days("yesterday"), None);
        assert_eq!(epoch_day_label(20_422.5), "2025-11-30");
        assert_eq!(epoch_day_label(20_422.0), "2025-11-30");
        assert_eq!(epoch_day_label(20_422.99), "2025-11-30");
        assert_eq!(epoch_day_label(-3.0), "1970-01-01");
    }

    #[test]
    fn date_ticks_fall_on_days_months_or_years_as_the_span_allows() {
        let day = |d: &str| epoch_days(&format!("{d}T00:00:00Z")).unwrap();
        let labels = |lo: &str, hi: &str, max: usize| -> Vec<String> {
            let ticks = date_ticks(day(lo), day(hi), max);
            for (at, label) in &ticks {
                assert!(
                    epoch_day_label(*at).starts_with(label.as_str()),
                    "{at} {label}"
                );
            }
            ticks.into_iter().map(|(_, l)| l).collect()
        };
        // (from, to, characters of room, the labels): room for three full
        // dates (39 characters), or for five months, and so on.
        let cases: [(&str, &str, usize, &[&str]); 7] = [
            (
                "2026-10-01",
                "2026-10-03",
                39,
                &["2026-10-01", "2026-10-02", "2026-10-03"],
            ),
            (
                "2026-09-01",
                "2026-10-15",
                39,
                &["2026-09-10", "2026-09-24", "2026-10-08"],
            ),
            ("2026-09-01", "2026-10-15", 20, &["2026-09", "2026-10"]),
            (
                "2026-01-15",
                "2026-12-31",
                50,
                &["2026-03", "2026-05", "2026-07", "2026-09", "2026-11"],
            ),
            (
                "2024-01-01",
                "2026-09-27",
                60,
                &[
                    "2024-01", "2024-07", "2025-01", "2025-07", "2026-01", "2026-07",
                ],
            ),
            ("2024-01-01", "2026-09-27", 25, &["2024", "2025", "2026"]),
            ("1990-06-01", "2026-01-01", 25, &["2000", "2010", "2020"]),
        ];
        for (lo, hi, room, want) in cases {
            assert_eq!(labels(lo, hi, room), want, "{lo} to {hi} in {room}");
        }
        // Too little room for even one label: none.
        assert_eq!(labels("2024-01-01", "2026-09-27", 5), Vec::<String>::new());
        // Within one day: a tick only where a day starts inside the range.
        assert_eq!(date_ticks(20_422.2, 20_422.8, 39), Vec::new());
    }

    #[test]
    fn context_labels() {
        assert_eq!(context_label(8_192), "8K");
        assert_eq!(context_label(1_043_456), "1019K");
        assert_eq!(context_label(257_024), "251K");
        assert_eq!(context_label(1_048_576), "1024K");
        assert_eq!(context_label(3_000), "3,000");
        assert_eq!(context_label(512), "512");
        assert_eq!(context_label(0), "0 (no prompt)");
        assert_eq!(parse_context_label("0 (no prompt)"), Ok(0));
        assert_eq!(parse_context_label("8K"), Ok(8_192));
        assert_eq!(parse_context_label("1019K"), Ok(1_043_456));
        assert_eq!(parse_context_label("251K"), Ok(257_024));
        assert_eq!(parse_context_label("3,000"), Ok(3_000));
        assert!(parse_context_label("8k").is_err());
        assert!(parse_context_label("K").is_err());
        assert_eq!(range_label("8K", "1019K"), "8K–1019K");
        assert_eq!(range_label("8K", "8K"), "8K");
    }

    #[test]
    fn a_column_of_throughputs_has_one_format() {
        assert_eq!(
            tok_per_s_column(&[18_919.0, 4_764.0, 16_300.0]),
            ["18.9K", "4.8K", "16.3K"]
        );
        assert_eq!(tok_per_s_column(&[175.8, 4_764.0]), ["175.8", "4,764.0"]);
        assert!(tok_per_s_column(&[]).is_empty());
    }

    #[test]
    fn run_number_ticks_are_whole_distinct_and_fit() {
        for runs in [2u64, 4, 10, 31, 60, 250, 10_000] {
            for room in [30usize, 60, 120] {
                let ticks = whole_number_ticks(0.8, runs as f64 + 0.2, room);
                let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
                let mut distinct = labels.clone();
                distinct.dedup();
                assert_eq!(
                    labels, distinct,
                    "{runs} runs, {room} characters: {labels:?}"
                );
                assert!(
                    ticks
                        .iter()
                        .all(|(v, l)| v.fract() == 0.0 && *l == v.to_string())
                );
                assert!(ticks.iter().all(|(v, _)| *v >= 1.0 && *v <= runs as f64));
                assert_eq!(labels.first(), Some(&"1"), "{runs} runs start at run 1");
                let width: usize = labels.iter().map(|l| l.len() + 3).sum();
                assert!(
                    width <= room || labels.len() == 1,
                    "{runs}, {room}: {labels:?}"
                );
            }
        }
        let four: Vec<String> = whole_number_ticks(0.8, 4.2, 60)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(four, ["1", "2", "3", "4"]);
        let sixty: Vec<String> = whole_number_ticks(0.0, 61.0, 60)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(sixty, ["1", "10", "20", "30", "40", "50", "60"]);
    }

    #[test]
    fn parsing_reads_back_what_formatting_writes() {
        for v in [175.8, 1412.4, 4764.0, 18_900.0, 35_000.0, 0.5, 999_900.0] {
            assert_eq!(parse_tok_per_s(&tok_per_s(v)), Ok(v), "{v}");
        }
        assert_eq!(parse_tok_per_s("4,764"), Ok(4764.0));
        assert_eq!(parse_millis("13,540 ms"), Ok(13_540.0));
        assert_eq!(parse_millis("5.6 ms"), Ok(5.6));
        assert_eq!(parse_seconds("29.9 s"), Ok(29.9));
        assert_eq!(parse_count("140,160"), Ok(140_160));
        assert_eq!(parse_optional(DASH, parse_count), Ok(None));
        assert_eq!(parse_optional("7", parse_count), Ok(Some(7)));
    }

    #[test]
    fn parsing_rejects_malformed_numbers() {
        for bad in [
            "", "1,23", "12,3456", "1.", ".5", "1,2.3", "abc", "1 234", "+5",
        ] {
            assert!(parse_grouped(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(parse_count("5.0").is_err());
        assert!(parse_millis("433").is_err());
        assert!(parse_seconds("30.0").is_err());
        assert!(parse_tok_per_s("18.9M").is_err());
        let e = parse_millis("433ms").unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected a latency like 433 ms, found \"433ms\""
        );
    }
}
