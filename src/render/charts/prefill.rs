//! The prefill chart of a run page: prompt tok/s by context, one bar per
//! context, each bar labelled with its throughput and TTFT.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{ChartError, ChartSize, FONT, FONT_SIZE, Frame, NARROW_WIDTH, wide_and_narrow};
use crate::model::format;

/// One bar: a context with its prompt throughput and cold-prompt TTFT.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrefillBar {
    pub context_tokens: u64,
    pub tok_per_s: f64,
    pub ttft_ms: f64,
}

/// Bar colour: Okabe–Ito blue, readable on light and dark backgrounds.
const BAR: RGBColor = RGBColor(0x00, 0x72, 0xb2);

/// Wide: a column per context, labelled above. Narrow (phones): a row per
/// context, labelled at its end, so every label keeps its full size.
pub(crate) fn prefill_chart(bars: &[PrefillBar], title: &str) -> Result<String, ChartError> {
    let size = ChartSize {
        wide: super::PREFILL_SIZE.wide,
        narrow: (NARROW_WIDTH, 56 + 34 * bars.len().max(1) as u32),
    };
    wide_and_narrow(title, size, |frame, svg| {
        if frame.narrow {
            draw_rows(svg, frame, bars)
        } else {
            draw_columns(svg, frame, bars)
        }
    })
}

fn text_style() -> TextStyle<'static> {
    TextStyle::from((FONT, FONT_SIZE).into_font()).color(&BLACK)
}

fn draw_columns(svg: &mut String, frame: Frame, bars: &[PrefillBar]) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    {
        let root = SVGBackend::with_string(svg, frame.size).into_drawing_area();
        let top = bars.iter().map(|b| b.tok_per_s).fold(0.0, f64::max);
        // Room above the tallest bar for its two-line label.
        let y_max = if top > 0.0 { top * 1.22 } else { 1.0 };
        // A segmented 0..k range has k + 1 segments: one per bar. A range of
        // one segment (0..0) has no width, so a lone bar gets the middle of
        // three.
        let offset = u32::from(bars.len() == 1);
        let last = if bars.len() == 1 {
            2
        } else {
            bars.len().saturating_sub(1) as u32
        };
        let segments = last + 1;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(34)
            .y_label_area_size(64)
            .build_cartesian_2d((0..last).into_segmented(), 0.0..y_max)
            .map_err(fail)?;
        let label_style = text_style();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .y_labels(super::distinct_tick_count(
                0.0,
                y_max,
                6,
                format::tok_per_s_short,
            ))
            .y_desc("prompt tok/s")
            .x_desc("context length")
            .axis_desc_style(label_style.clone())
            .label_style(label_style.clone())
            .x_label_formatter(&|seg| match seg {
                SegmentValue::CenterOf(i) => i
                    .checked_sub(offset)
                    .and_then(|i| bars.get(i as usize))
                    .map(|b| format::context_label(b.context_tokens))
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&|v| format::tok_per_s_short(*v))
            .draw()
            .map_err(fail)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let i = i as u32 + offset;
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), b.tok_per_s),
                    ],
                    BAR.filled(),
                );
                // Bars at most ~90 px wide, so a run with few contexts does not show slabs.
                let slot = (frame.size.0 - 12 * 2 - 64) / segments;
                let side = (slot.saturating_sub(90) / 2).max(8);
                r.set_margin(0, 0, side, side);
                r
            }))
            .map_err(fail)?;
        let value_style = label_style
            .clone()
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        let ttft_style = TextStyle::from((FONT, FONT_SIZE - 2.0).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let at = (SegmentValue::CenterOf(i as u32 + offset), b.tok_per_s);
                EmptyElement::at(at)
                    + Text::new(
                        format::tok_per_s_short(b.tok_per_s),
                        (0, -18),
                        value_style.clone(),
                    )
                    + Text::new(
                        format!("{} TTFT", format::millis(b.ttft_ms)),
                        (0, -4),
                        ttft_style.clone(),
                    )
            }))
            .map_err(fail)?;
        root.present().map_err(fail)?;
    }
    Ok(())
}

fn draw_rows(svg: &mut String, frame: Frame, bars: &[PrefillBar]) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    {
        let root = SVGBackend::with_string(svg, frame.size).into_drawing_area();
        let top = bars.iter().map(|b| b.tok_per_s).fold(0.0, f64::max);
        // The bar takes ~55% of the width; its label follows it.
        let x_max = if top > 0.0 { top * 1.8 } else { 1.0 };
        let last = bars.len().saturating_sub(1).max(1) as u32;
        // Rows top to bottom in context order: plotters' y grows upwards.
        let row = |i: usize| last - i as u32;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0.0..x_max, (0..last).into_segmented())
            .map_err(fail)?;
        let label_style = text_style();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .x_labels(0)
            .y_labels(bars.len().max(1))
            .x_desc("prompt tok/s (TTFT)")
            .axis_desc_style(label_style.clone())
            .label_style(label_style.clone())
            .y_label_formatter(&|seg| match seg {
                SegmentValue::CenterOf(i) => bars
                    .get((last - *i) as usize)
                    .map(|b| format::context_label(b.context_tokens))
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(fail)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let i = row(i);
                let mut r = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (b.tok_per_s, SegmentValue::Exact(i + 1)),
                    ],
                    BAR.filled(),
                );
                r.set_margin(5, 5, 0, 0);
                r
            }))
            .map_err(fail)?;
        let value_style = label_style.pos(Pos::new(HPos::Left, VPos::Center));
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                EmptyElement::at((b.tok_per_s, SegmentValue::CenterOf(row(i))))
                    + Text::new(
                        format!(
                            "{} ({})",
                            format::tok_per_s_short(b.tok_per_s),
                            format::millis(b.ttft_ms)
                        ),
                        (6, 0),
                        value_style.clone(),
                    )
            }))
            .map_err(fail)?;
        root.present().map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bar's rectangle: (x, width) as drawn.
    fn bar_rects(svg: &str) -> Vec<(f64, f64)> {
        svg.split("<rect ")
            .skip(1)
            .filter(|r| r.contains("fill=\"#0072B2\"") || r.contains("fill=\"#0072b2\""))
            .map(|r| {
                let attr = |name: &str| -> f64 {
                    let at = r
                        .find(&format!(" {name}=\""))
                        .or_else(|| r.find(&format!("{name}=\"")))
                        .unwrap();
                    let rest = &r[at..];
                    let start = rest.find('"').unwrap() + 1;
                    let end = start + rest[start..].find('"').unwrap();
                    rest[start..end].parse().unwrap()
                };
                (attr("x"), attr("width"))
            })
            .collect()
    }

    #[test]
    fn one_bar_or_many_each_has_a_positive_width_of_at_most_90_px() {
        for n in [1usize, 2, 3, 9] {
            let bars: Vec<PrefillBar> = (0..n)
                .map(|i| PrefillBar {
                    context_tokens: 8192 << i,
                    tok_per_s: 10_000.0,
                    ttft_ms: 100.0,
                })
                .collect();
            let svg = prefill_chart(&bars, "Prefill").unwrap();
            let wide = &svg[..svg.find("<svg class=\"chart narrow\"").unwrap()];
            let rects = bar_rects(wide);
            assert_eq!(rects.len(), n, "{svg}");
            for (x, w) in rects {
                assert!(
                    w > 0.0 && w <= 91.0 && x >= 0.0,
                    "{n} bars: x {x}, width {w}"
                );
            }
        }
    }

    #[test]
    fn every_bar_is_labelled_with_throughput_and_ttft() {
        let bars = [
            PrefillBar {
                context_tokens: 8192,
                tok_per_s: 18_900.0,
                ttft_ms: 433.0,
            },
            PrefillBar {
                context_tokens: 65_536,
                tok_per_s: 4_764.0,
                ttft_ms: 13_540.0,
            },
        ];
        let svg = prefill_chart(&bars, "Prefill <test>").unwrap();
        assert!(svg.starts_with("<svg class=\"chart wide\" viewBox=\"0 0 900 360\""));
        assert!(svg.contains("<svg class=\"chart narrow\" viewBox=\"0 0 360 124\""));
        for text in ["18.9K (433 ms)", "4,764 (13,540 ms)"] {
            assert!(
                svg.contains(&format!(">\n{text}\n<")),
                "narrow drawing lacks {text}"
            );
        }
        assert!(
            svg.contains("<title>Prefill &#60;test&#62;</title>")
                || svg.contains("<title>Prefill &lt;test&gt;</title>"),
            "{svg}"
        );
        for text in [
            "18.9K",
            "433 ms TTFT",
            "4,764",
            "13,540 ms TTFT",
            "8K",
            "64K",
        ] {
            assert!(svg.contains(&format!(">\n{text}\n<")), "missing {text}");
        }
        assert!(!svg.contains("width=\"900\""), "fixed size would not scale");
    }

    #[test]
    fn a_single_bar_or_none_still_draws() {
        let one = [PrefillBar {
            context_tokens: 2048,
            tok_per_s: 500.0,
            ttft_ms: 4.0,
        }];
        assert!(prefill_chart(&one, "t").unwrap().contains("500"));
        assert!(prefill_chart(&[], "t").unwrap().ends_with("</svg>\n"));
    }
}
