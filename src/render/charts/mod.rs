//! Charts as inline SVG text, drawn with plotters' SVG backend (no system
//! fonts needed: text stays text and the browser lays it out).

pub mod lines;
pub mod prefill;

/// A chart's two drawings, in SVG user units (each SVG scales with its box):
/// one for screens wider than a phone, one for phones, drawn narrow so its
/// text stays at least 11 CSS px where a wide drawing would shrink to 5 px.
/// The page shows one of them by a media query (static/style.css).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) struct ChartSize {
    pub wide: (u32, u32),
    pub narrow: (u32, u32),
}

/// The width phones draw charts at: a 390 px screen less the page's margins.
pub(crate) const NARROW_WIDTH: u32 = 360;

pub(crate) const PREFILL_SIZE: ChartSize = ChartSize {
    wide: (900, 360),
    narrow: (NARROW_WIDTH, 300),
};
/// Small multiples sit two abreast at ~560 px: drawn at 480 units, their
/// text is drawn larger than on the page's wide charts.
pub(crate) const DECODE_SIZE: ChartSize = ChartSize {
    wide: (480, 300),
    narrow: (NARROW_WIDTH, 280),
};
pub(crate) const INTERACTIVITY_SIZE: ChartSize = ChartSize {
    wide: (900, 420),
    narrow: (NARROW_WIDTH, 360),
};
pub(crate) const CAPACITY_SIZE: ChartSize = ChartSize {
    wide: (900, 340),
    narrow: (NARROW_WIDTH, 300),
};

/// One drawing of a chart: its size, and whether it is the phone's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub size: (u32, u32),
    pub narrow: bool,
}

impl Frame {
    /// At most this many labelled ticks fit along an axis of this drawing.
    pub(crate) fn max_ticks(self) -> usize {
        if self.narrow { 6 } else { 12 }
    }
}

/// Draws a chart wide and narrow (`draw` writes plotters' SVG for a frame)
/// and returns both SVGs, each with the chart's title.
pub(crate) fn wide_and_narrow(
    title: &str,
    size: ChartSize,
    draw: impl Fn(Frame, &mut String) -> Result<(), String>,
) -> Result<String, ChartError> {
    let one = |frame: Frame, class: &str| {
        let mut svg = String::new();
        draw(frame, &mut svg).map_err(|e| ChartError::new(title, e))?;
        finish_svg(&svg, frame.size, title, class)
    };
    let wide = one(
        Frame {
            size: size.wide,
            narrow: false,
        },
        "chart wide",
    )?;
    let narrow = one(
        Frame {
            size: size.narrow,
            narrow: true,
        },
        "chart narrow",
    )?;
    Ok(format!("{wide}{narrow}"))
}

/// A chart that could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("drawing the chart {title:?}: {message}")]
pub struct ChartError {
    pub title: String,
    pub message: String,
}

impl ChartError {
    pub fn new(title: &str, message: impl std::fmt::Display) -> ChartError {
        ChartError {
            title: title.to_string(),
            message: message.to_string(),
        }
    }
}

/// The ticks plotters labels on a numeric axis from `lo` to `hi` asked for
/// `n` (its mesh's bold key points).
pub(crate) fn key_points(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    use plotters::coord::ranged1d::{BoldPoints, Ranged};
    plotters::coord::types::RangedCoordf64::from(lo..hi).key_points(BoldPoints(n))
}

/// How many ticks to ask plotters for on `lo..hi`: at most `max`, fewer
/// while its ticks would repeat a label (a format rounding 1.4 and 1.6
/// both to "1"): one label twice on an axis names two places one value.
pub(crate) fn distinct_tick_count(
    lo: f64,
    hi: f64,
    max: usize,
    label: impl Fn(f64) -> String,
) -> usize {
    (1..=max)
        .rev()
        .find(|&n| {
            let mut labels: Vec<String> = key_points(lo, hi, n)
                .into_iter()
                .map(&label)
                .filter(|l| !l.is_empty())
                .collect();
            let all = labels.len();
            labels.sort_unstable();
            labels.dedup();
            labels.len() == all
        })
        .unwrap_or(0)
}

/// Chart text size as plotters takes it (points; it writes 1/1.24 of it as
/// the SVG's font-size, [`FONT_PX`]).
pub(crate) const FONT_SIZE: f64 = 15.0;
/// The font-size plotters writes for [`FONT_SIZE`], in SVG user units.
pub(crate) const FONT_PX: f64 = FONT_SIZE / 1.24;
pub(crate) const FONT: &str = "sans-serif";

/// Makes plotters' SVG scale with its box and gives it an accessible name:
/// the fixed width/height become a viewBox, and a `<title>` is added.
pub(crate) fn finish_svg(
    svg: &str,
    (width, height): (u32, u32),
    title: &str,
    class: &str,
) -> Result<String, ChartError> {
    let head = format!(
        r#"<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">"#
    );
    let body = svg.strip_prefix(&head).ok_or_else(|| {
        ChartError::new(
            title,
            format!(
                "plotters' SVG does not start with the header expected: {}",
                svg.chars().take(120).collect::<String>()
            ),
        )
    })?;
    let escaped = html_escape(title);
    Ok(format!(
        r#"<svg class="{class}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escaped}"><title>{escaped}</title>{body}"#
    ))
}

/// Escapes text for an HTML attribute or element, with askama's escaper.
pub(crate) fn html_escape(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html)
        .map(|safe| safe.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_svg_without_the_expected_header_is_an_error_not_a_panic() {
        let e = finish_svg("<svg width=\"1\">", (900, 360), "Prefill", "chart").unwrap_err();
        assert_eq!(e.title, "Prefill");
        assert!(e.message.contains("header"), "{e}");
    }
}
