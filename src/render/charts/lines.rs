//! Line and point charts with one series per run: overlaid prefill, decode
//! throughput by concurrency, throughput against interactivity, capacity.
//!
//! Series are told apart by colour (Okabe–Ito, safe for colour blindness)
//! and by marker shape. The legend is HTML next to the chart, so it follows
//! the page's colour scheme; `palette` gives its colours.

use plotters::prelude::*;

use super::{ChartError, FONT, FONT_SIZE, finish_svg};

/// Okabe–Ito colours without yellow (too light on white), in series order.
pub(crate) const PALETTE: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x56, 0xb4, 0xe9),
];

/// Marker shapes, in series order, so series differ without colour too.
pub(crate) const MARKERS: [&str; 6] = ["circle", "triangle", "square", "diamond", "cross", "ring"];

/// The CSS colour of series `i`.
pub(crate) fn palette(i: usize) -> String {
    let c = PALETTE[i % PALETTE.len()];
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Linear,
    /// Plotted at log2(value); ticks at whole powers of two.
    Log2,
}

pub(crate) struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Tick label of a value (in the axis' own units, not log2).
    pub format: fn(f64) -> String,
}

pub struct Series {
    /// Palette and marker index.
    pub style: usize,
    pub points: Vec<(f64, f64)>,
    /// Drawn thick (a frontier); thin lines are context.
    pub emphasis: bool,
    /// Draw the points joined by a line.
    pub joined: bool,
}

fn to_plot(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log2 => v.max(f64::MIN_POSITIVE).log2(),
    }
}

fn from_plot(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log2 => v.exp2(),
    }
}

/// The plotted range of values, padded, and never empty.
fn range(scale: Scale, values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let v: Vec<f64> = values
        .map(|x| to_plot(scale, x))
        .filter(|x| x.is_finite())
        .collect();
    let (mut lo, mut hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero && scale == Scale::Linear {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        let pad = if scale == Scale::Log2 {
            1.0
        } else {
            hi.abs().max(1.0) * 0.5
        };
        lo -= pad;
        hi += pad;
        if from_zero && scale == Scale::Linear {
            lo = lo.max(0.0);
        }
    }
    let pad = (hi - lo) * 0.06;
    (
        if from_zero && scale == Scale::Linear && lo >= 0.0 {
            lo
        } else {
            lo - pad
        },
        hi + pad,
    )
}

/// Draws the series into an SVG with a title (also its accessible name).
pub(crate) fn xy_chart(
    title: &str,
    size: (u32, u32),
    x: &Axis,
    y: &Axis,
    series: &[Series],
) -> Result<String, ChartError> {
    let mut svg = String::new();
    draw_xy(&mut svg, size, x, y, series).map_err(|e| ChartError::new(title, e))?;
    finish_svg(&svg, size, title, "chart")
}

fn draw_xy(
    svg: &mut String,
    size: (u32, u32),
    x: &Axis,
    y: &Axis,
    series: &[Series],
) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    {
        let root = SVGBackend::with_string(svg, size).into_drawing_area();
        let all = || series.iter().flat_map(|s| s.points.iter().copied());
        let (x0, x1) = range(x.scale, all().map(|p| p.0), false);
        let (y0, y1) = range(y.scale, all().map(|p| p.1), true);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(fail)?;
        let text = TextStyle::from((FONT, FONT_SIZE).into_font()).color(&BLACK);
        let label = |scale: Scale, format: fn(f64) -> String, v: f64| match scale {
            // Only whole powers of two are labelled on a log2 axis.
            Scale::Log2 if (v - v.round()).abs() > 1e-6 => String::new(),
            Scale::Log2 => format(from_plot(scale, v.round())),
            Scale::Linear => format(v),
        };
        let x_ticks = if x.scale == Scale::Log2 {
            ((x1 - x0).ceil() as usize + 1).min(12)
        } else {
            7
        };
        let y_ticks = if y.scale == Scale::Log2 {
            ((y1 - y0).ceil() as usize + 1).min(10)
        } else {
            6
        };
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.12))
            .x_labels(x_ticks)
            .y_labels(y_ticks)
            .x_desc(x.label.as_str())
            .y_desc(y.label.as_str())
            .axis_desc_style(text.clone())
            .label_style(text.clone())
            .x_label_formatter(&|v| label(x.scale, x.format, *v))
            .y_label_formatter(&|v| label(y.scale, y.format, *v))
            .draw()
            .map_err(fail)?;
        for s in series {
            let colour = PALETTE[s.style % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|&(a, b)| (to_plot(x.scale, a), to_plot(y.scale, b)))
                .collect();
            if s.joined && pts.len() > 1 {
                let width = if s.emphasis { 3 } else { 1 };
                let line_colour = if s.emphasis {
                    colour.to_rgba()
                } else {
                    colour.mix(0.55)
                };
                chart
                    .draw_series(LineSeries::new(
                        pts.clone(),
                        line_colour.stroke_width(width),
                    ))
                    .map_err(fail)?;
            }
            if s.emphasis || !s.joined {
                let (filled, stroke) = (colour.filled(), colour.stroke_width(2));
                let drawn = match s.style % MARKERS.len() {
                    0 => chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, filled))),
                    1 => chart.draw_series(pts.iter().map(|&p| TriangleMarker::new(p, 5, filled))),
                    2 => chart.draw_series(pts.iter().map(|&p| {
                        EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], filled)
                    })),
                    3 => chart.draw_series(pts.iter().map(|&p| {
                        EmptyElement::at(p)
                            + Polygon::new(vec![(0, -5), (5, 0), (0, 5), (-5, 0)], filled)
                    })),
                    4 => chart.draw_series(pts.iter().map(|&p| Cross::new(p, 4, stroke))),
                    _ => chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, stroke))),
                };
                drawn.map_err(fail)?;
            }
        }
        root.present().map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::charts::DECODE_SIZE;

    fn axis(scale: Scale) -> Axis {
        Axis {
            label: "x".into(),
            scale,
            format: |v| format!("{v:.0}"),
        }
    }

    fn draw(x: Scale, y: Scale, series: &[Series]) -> String {
        xy_chart("t", DECODE_SIZE, &axis(x), &axis(y), series).unwrap()
    }

    #[test]
    fn six_series_and_a_single_point_still_draw() {
        let series: Vec<Series> = (0..6)
            .map(|i| Series {
                style: i,
                points: vec![(1.0, 10.0 * (i as f64 + 1.0)), (2.0, 20.0), (4.0, 35.0)],
                emphasis: true,
                joined: true,
            })
            .collect();
        let svg = draw(Scale::Log2, Scale::Linear, &series);
        for i in 0..6 {
            assert!(
                svg.contains(&palette(i).to_uppercase()[1..]) || svg.contains(&palette(i)[1..]),
                "series {i} missing"
            );
        }
        let one = [Series {
            style: 0,
            points: vec![(8192.0, 150.0)],
            emphasis: true,
            joined: true,
        }];
        let svg = draw(Scale::Log2, Scale::Log2, &one);
        assert!(svg.contains("<circle"), "{svg}");
        let none: [Series; 0] = [];
        assert!(draw(Scale::Linear, Scale::Linear, &none).ends_with("</svg>\n"));
    }

    #[test]
    fn log2_axes_label_whole_powers_only() {
        let s = [Series {
            style: 0,
            points: vec![(8192.0, 1.0), (1_048_576.0, 2.0)],
            emphasis: false,
            joined: true,
        }];
        let x = Axis {
            label: "context".into(),
            scale: Scale::Log2,
            format: |v| crate::format::context_label(v as u64),
        };
        let svg = xy_chart("t", DECODE_SIZE, &x, &axis(Scale::Linear), &s).unwrap();
        assert!(
            svg.contains(">\n8K\n<") && svg.contains(">\n1024K\n<"),
            "{svg}"
        );
    }
}
