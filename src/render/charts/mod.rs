//! Charts as inline SVG text, drawn with plotters' SVG backend (no system
//! fonts needed: text stays text and the browser lays it out).

pub mod lines;
pub mod prefill;

/// Chart sizes in SVG user units (the SVG scales with its box): a wide
/// chart per section, smaller ones for the small multiples of decode.
pub(crate) const PREFILL_SIZE: (u32, u32) = (900, 360);
pub(crate) const DECODE_SIZE: (u32, u32) = (640, 300);
pub(crate) const INTERACTIVITY_SIZE: (u32, u32) = (900, 420);
pub(crate) const CAPACITY_SIZE: (u32, u32) = (900, 340);

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

/// Chart text size in SVG user units.
pub(crate) const FONT_SIZE: f64 = 15.0;
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
