//! Charts as inline SVG text, drawn with plotters' SVG backend (no system
//! fonts needed: text stays text and the browser lays it out).

pub mod lines;
pub mod prefill;

/// Chart text size in SVG user units.
pub const FONT_SIZE: f64 = 15.0;
pub const FONT: &str = "sans-serif";

/// Makes plotters' SVG scale with its box and gives it an accessible name:
/// the fixed width/height become a viewBox, and a `<title>` is added.
pub fn finish_svg(svg: &str, (width, height): (u32, u32), title: &str, class: &str) -> String {
    let head = format!(
        r#"<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">"#
    );
    let body = svg
        .strip_prefix(&head)
        .expect("plotters writes its own <svg> header first");
    let title = html_escape(title);
    format!(
        r#"<svg class="{class}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{title}"><title>{title}</title>{body}"#
    )
}

/// Escapes text for an HTML attribute or element, with askama's escaper.
pub fn html_escape(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html)
        .map(|safe| safe.to_string())
        .unwrap_or_default()
}
