//! Line and point charts with one series per run: overlaid prefill, decode
//! throughput by concurrency, throughput against interactivity, capacity.
//!
//! Series are told apart by colour (Okabe–Ito, safe for colour blindness)
//! and by marker shape. The legend is HTML next to the chart, so it follows
//! the page's colour scheme; `palette` gives its colours.

use plotters::prelude::*;

use super::{ChartError, ChartSize, FONT, FONT_SIZE, Frame, wide_and_narrow};

/// A character's average width in a label, as a share of the font size
/// (dates and digits in the sans-serif the pages use).
const CHAR_WIDTH: f64 = 0.6;

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
    /// Whether a linear axis starts at 0 (throughput does).
    pub from_zero: bool,
    /// The plotted range, when several charts share one axis (the decode
    /// small multiples do), instead of each fitting its own points.
    pub fixed: Option<(f64, f64)>,
    /// An axis that places its own ticks (dates on month starts): given its
    /// range and how many characters fit along it, the ticks and labels.
    pub ticks: Option<PlaceTicks>,
}

/// Ticks of an axis that places its own: (from, to, characters that fit).
pub(crate) type PlaceTicks = fn(f64, f64, usize) -> Vec<(f64, String)>;

impl Axis {
    pub(crate) fn new(label: impl Into<String>, scale: Scale, format: fn(f64) -> String) -> Axis {
        Axis {
            label: label.into(),
            scale,
            format,
            from_zero: true,
            fixed: None,
            ticks: None,
        }
    }

    /// The label of a tick at plotted value `v`.
    pub(crate) fn tick_label(&self, v: f64) -> String {
        match self.scale {
            // Only whole powers of two are labelled on a log2 axis.
            Scale::Log2 if (v - v.round()).abs() > 1e-6 => String::new(),
            Scale::Log2 => (self.format)(from_plot(self.scale, v.round())),
            Scale::Linear => (self.format)(v),
        }
    }

    /// How many ticks plotters is asked for over `lo..hi` (plotted values):
    /// a log2 axis one per power of two up to `log2_max`, a linear one
    /// `linear`; fewer where those would repeat a label.
    pub(crate) fn tick_count(&self, lo: f64, hi: f64, log2_max: usize, linear: usize) -> usize {
        let max = match self.scale {
            Scale::Log2 => ((hi - lo).ceil() as usize + 1).min(log2_max),
            Scale::Linear => linear,
        };
        super::distinct_tick_count(lo, hi, max, |v| self.tick_label(v))
    }

    /// This axis plotted over the range that fits every one of `values`.
    pub(crate) fn shared_over(mut self, values: impl Iterator<Item = f64>) -> Axis {
        self.fixed = Some(range(self.scale, values, self.from_zero));
        self
    }
}

pub struct Series {
    /// Palette and marker index.
    pub style: usize,
    pub points: Vec<(f64, f64)>,
    /// Drawn thick (a frontier); thin lines are context.
    pub emphasis: bool,
    /// Draw the points joined by a line.
    pub joined: bool,
    /// A full-colour line without markers: a long history, whose points
    /// would bury the line.
    pub solid: bool,
    /// Written at the line's last point, so a thin line says what it is.
    pub label: Option<String>,
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

/// Draws the series into two SVGs, wide and narrow, with a title (also their
/// accessible name).
pub(crate) fn xy_chart(
    title: &str,
    size: ChartSize,
    x: &Axis,
    y: &Axis,
    series: &[Series],
) -> Result<String, ChartError> {
    xy_chart_marked(title, size, x, y, series, &[])
}

/// A vertical line across a chart at an x value: where something happened
/// (a series shifted, a change was made).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mark {
    pub x: f64,
    /// Drawn in the slower colour (a shift found) or grey (a noted change).
    pub shift: bool,
}

/// [`xy_chart`] with vertical marks.
pub(crate) fn xy_chart_marked(
    title: &str,
    size: ChartSize,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    marks: &[Mark],
) -> Result<String, ChartError> {
    wide_and_narrow(title, size, |frame, svg| {
        draw_xy(svg, frame, x, y, series, marks)
    })
}

fn draw_xy(
    svg: &mut String,
    frame: Frame,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    marks: &[Mark],
) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    {
        let root = SVGBackend::with_string(svg, frame.size).into_drawing_area();
        let all = || series.iter().flat_map(|s| s.points.iter().copied());
        let (x0, x1) = range(x.scale, all().map(|p| p.0), false);
        let (y0, y1) = range(y.scale, all().map(|p| p.1), y.from_zero);
        let (y0, y1) = y.fixed.unwrap_or((y0, y1));
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(fail)?;
        let text = TextStyle::from((FONT, FONT_SIZE).into_font()).color(&BLACK);
        let x_ticks = if x.ticks.is_some() {
            0 // drawn below, where the axis places them
        } else {
            x.tick_count(x0, x1, frame.max_ticks(), frame.max_ticks().min(7))
        };
        let y_ticks = y.tick_count(y0, y1, 10, 6);
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
            .x_label_formatter(&|v| x.tick_label(*v))
            .y_label_formatter(&|v| y.tick_label(*v))
            .draw()
            .map_err(fail)?;
        if let Some(place) = x.ticks {
            let width = chart.plotting_area().dim_in_pixel().0 as f64;
            let room = (width / (super::FONT_PX * CHAR_WIDTH)) as usize;
            let below = text.pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ));
            for (at, label) in place(x0, x1, room) {
                chart
                    .draw_series(LineSeries::new(
                        [(at, y0), (at, y1)],
                        BLACK.mix(0.12).stroke_width(1),
                    ))
                    .map_err(fail)?;
                let (px, py) = chart.backend_coord(&(at, y0));
                // A label that would run off the drawing's right edge is left out.
                let half = label.len() as f64 * super::FONT_PX * CHAR_WIDTH / 2.0;
                if px as f64 + half > frame.size.0 as f64 {
                    continue;
                }
                root.draw(&PathElement::new(
                    [(px, py), (px, py + 5)],
                    BLACK.stroke_width(1),
                ))
                .map_err(fail)?;
                root.draw(&Text::new(label, (px, py + 8), below.clone()))
                    .map_err(fail)?;
            }
        }
        for m in marks {
            let at = to_plot(x.scale, m.x);
            let colour = if m.shift {
                RGBColor(0xd5, 0x5e, 0x00).stroke_width(2)
            } else {
                BLACK.mix(0.45).stroke_width(2)
            };
            chart
                .draw_series(LineSeries::new([(at, y0), (at, y1)], colour))
                .map_err(fail)?;
        }
        // Lines and markers first, then the labels where they cover neither.
        let mut markers: Vec<(i32, i32)> = Vec::new();
        for s in series {
            let colour = PALETTE[s.style % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|&(a, b)| (to_plot(x.scale, a), to_plot(y.scale, b)))
                .collect();
            if s.joined && pts.len() > 1 {
                let width = if s.emphasis {
                    3
                } else if s.solid {
                    2
                } else {
                    1
                };
                let line_colour = if s.emphasis || s.solid {
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
            if (s.emphasis || !s.joined) && !s.solid {
                // A point of this series closer than a marker's width to one
                // already drawn shares its marker (251K beside 256K): two
                // would print over each other; the table gives both.
                let mut own: Vec<(i32, i32)> = Vec::new();
                let pts: Vec<(f64, f64)> = pts
                    .into_iter()
                    .filter(|&p| {
                        let at = chart.backend_coord(&p);
                        let apart = own.iter().all(|o| {
                            (o.0 - at.0).abs() >= MARKER_ROOM || (o.1 - at.1).abs() >= MARKER_ROOM
                        });
                        if apart {
                            own.push(at);
                        }
                        apart
                    })
                    .collect();
                markers.extend(&own);
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
        // A thin line's label goes beside its last point where it covers no
        // marker and no label already written, trying right, left, above
        // and below; where none is free it is left out (the chart's table
        // names every line).
        let area = chart.plotting_area().get_pixel_range();
        let mut labels: Vec<LabelBox> = Vec::new();
        for s in series {
            let (Some(label), Some(&end)) = (&s.label, s.points.last()) else {
                continue;
            };
            let end = (to_plot(x.scale, end.0), to_plot(y.scale, end.1));
            let at = chart.backend_coord(&end);
            let Some(place) = label_place(
                at,
                label,
                &markers,
                &labels,
                (area.0.clone(), area.1.clone()),
            ) else {
                continue;
            };
            labels.push(place);
            let style = TextStyle::from((FONT, FONT_SIZE).into_font())
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Top,
                ));
            root.draw(&Text::new(label.clone(), (place.x0, place.y0), style))
                .map_err(fail)?;
        }
        root.present().map_err(fail)?;
    }
    Ok(())
}

/// Pixels apart two markers of one series must be, each way, to be drawn both.
const MARKER_ROOM: i32 = 8;
/// How far a label's box keeps from a marker's centre.
const MARKER_CLEAR: i32 = 6;

/// Where a label is written, as a box in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LabelBox {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
}

impl LabelBox {
    fn overlaps(&self, o: &LabelBox) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    fn covers(&self, p: (i32, i32)) -> bool {
        p.0 > self.x0 - MARKER_CLEAR
            && p.0 < self.x1 + MARKER_CLEAR
            && p.1 > self.y0 - MARKER_CLEAR
            && p.1 < self.y1 + MARKER_CLEAR
    }
}

/// The first place beside `at` (right, left, above, below) where `label`
/// stays inside `area`, covers no marker and overlaps no label placed.
fn label_place(
    at: (i32, i32),
    label: &str,
    markers: &[(i32, i32)],
    placed: &[LabelBox],
    area: (std::ops::Range<i32>, std::ops::Range<i32>),
) -> Option<LabelBox> {
    let w = (label.chars().count() as f64 * super::FONT_PX * CHAR_WIDTH).ceil() as i32;
    let h = super::FONT_PX.ceil() as i32;
    let gap = MARKER_CLEAR + 1;
    let tries = [
        (at.0 + gap, at.1 - h / 2),
        (at.0 - gap - w, at.1 - h / 2),
        (at.0 - w / 2, at.1 - gap - h),
        (at.0 - w / 2, at.1 + gap),
    ];
    tries
        .into_iter()
        .map(|(x0, y0)| LabelBox {
            x0,
            y0,
            x1: x0 + w,
            y1: y0 + h,
        })
        .find(|b| {
            b.x0 >= area.0.start
                && b.x1 <= area.0.end
                && b.y0 >= area.1.start
                && b.y1 <= area.1.end
                && !markers.iter().any(|&m| b.covers(m))
                && !placed.iter().any(|p| p.overlaps(b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::charts::DECODE_SIZE;

    fn axis(scale: Scale) -> Axis {
        Axis::new("x", scale, |v| format!("{v:.0}"))
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
                solid: false,
                label: None,
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
            solid: false,
            label: None,
        }];
        let svg = draw(Scale::Log2, Scale::Log2, &one);
        assert!(svg.contains("<circle"), "{svg}");
        let none: [Series; 0] = [];
        assert!(draw(Scale::Linear, Scale::Linear, &none).ends_with("</svg>\n"));
    }

    #[test]
    fn a_label_never_covers_a_marker_or_another_label() {
        let area = (0..400, 0..300);
        let markers = [(200, 100), (230, 100)];
        // Right of the point a marker sits: the label goes left instead.
        let b = label_place((200, 100), "256K", &[(230, 100)], &[], area.clone()).unwrap();
        assert!(b.x1 <= 200 - MARKER_CLEAR, "{b:?}");
        assert!(!markers.iter().any(|&m| b.covers(m)));
        // With the left and right taken, above; with every side, none.
        let left = label_place((200, 100), "8K", &[], &[], area.clone()).unwrap();
        let crowded = [(215, 100), (185, 100)];
        let above = label_place((200, 100), "8K", &crowded, &[left], area.clone()).unwrap();
        assert!(above.y1 <= 100 - MARKER_CLEAR, "{above:?}");
        let all = [(215, 100), (185, 100), (200, 85), (200, 115)];
        assert_eq!(label_place((200, 100), "8K", &all, &[], area.clone()), None);
        // Never out of the plotting area.
        let edge = label_place((398, 100), "1019K", &[], &[], area).unwrap();
        assert!(edge.x1 <= 400 && edge.x0 >= 0, "{edge:?}");
    }

    #[test]
    fn points_closer_than_a_marker_share_one_marker() {
        let s = [Series {
            style: 0,
            // 251K and 256K on a log2 axis from 8K to 1024K: a few pixels apart.
            points: vec![
                (8192.0, 100.0),
                (257_024.0, 200.0),
                (262_144.0, 200.0),
                (1_048_576.0, 150.0),
            ],
            emphasis: true,
            joined: true,
            solid: false,
            label: None,
        }];
        let svg = xy_chart(
            "t",
            DECODE_SIZE,
            &axis(Scale::Log2),
            &axis(Scale::Linear),
            &s,
        )
        .unwrap();
        // Drawn wide and narrow: three markers in each.
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
    }

    #[test]
    fn log2_axes_label_whole_powers_only() {
        let s = [Series {
            style: 0,
            points: vec![(8192.0, 1.0), (1_048_576.0, 2.0)],
            emphasis: false,
            joined: true,
            solid: false,
            label: None,
        }];
        let x = Axis::new("context", Scale::Log2, |v| {
            crate::model::format::context_label(v as u64)
        });
        let svg = xy_chart("t", DECODE_SIZE, &x, &axis(Scale::Linear), &s).unwrap();
        assert!(
            svg.contains(">\n8K\n<") && svg.contains(">\n1024K\n<"),
            "{svg}"
        );
    }

    /// The labels written on `axis` over the range that fits `values`, in a
    /// drawing that fits at most `max` ticks on a log2 axis.
    fn written(axis: &Axis, values: &[f64], max: usize) -> Vec<String> {
        let (lo, hi) = range(axis.scale, values.iter().copied(), axis.from_zero);
        let n = axis.tick_count(lo, hi, max, max.min(7));
        crate::render::charts::key_points(lo, hi, n)
            .into_iter()
            .map(|v| axis.tick_label(v))
            .collect()
    }

    fn repeats(labels: &[String]) -> bool {
        let shown: Vec<&String> = labels.iter().filter(|l| !l.is_empty()).collect();
        (1..shown.len()).any(|i| shown[..i].contains(&shown[i]))
    }

    #[test]
    fn a_lone_level_is_labelled_once() {
        use crate::model::format;
        // A series' 1019K chart, where only 1 request at once ran validly:
        // one point, padded a power of two each way (-1.12 to 1.12), whose
        // ticks at 2^-1, 2^0 and 2^1 the rounding format wrote "1 1 2".
        let (lo, hi) = range(Scale::Log2, [1.0].into_iter(), false);
        assert!((lo + 1.12).abs() < 1e-12 && (hi - 1.12).abs() < 1e-12);
        let rounding = |v: f64| format!("{}", v.round());
        let old = Axis::new("requests", Scale::Log2, rounding);
        let asked = ((hi - lo).ceil() as usize + 1).min(12);
        let before: Vec<String> = crate::render::charts::key_points(lo, hi, asked)
            .into_iter()
            .map(|v| old.tick_label(v))
            .collect();
        assert_eq!(before, ["1", "1", "2"]);
        let x = Axis::new("requests", Scale::Log2, format::count_tick);
        for max in [12, 6] {
            assert_eq!(written(&x, &[1.0], max), ["", "1", "2"]);
            // Any format: the ticks thin out rather than repeat a label.
            assert_eq!(written(&old, &[1.0], max), ["1"]);
        }
        assert_eq!(format::count_tick(0.5), "");
        assert_eq!(format::count_tick(4.0), "4");
    }

    #[test]
    fn no_axis_repeats_a_label() {
        use crate::model::format;
        let tok = |scale| Axis::new("tok/s", scale, format::tok_per_s_short);
        let count = |scale| Axis::new("n", scale, format::count_tick);
        let mut ranges: Vec<Vec<f64>> = vec![vec![1.0], vec![3.0], vec![1.0, 2.0], vec![0.3]];
        for lo in [0.4, 1.0, 45.2, 999.0, 9_990.0, 10_020.0, 123_456.0] {
            for width in [0.01, 0.3, 0.9, 2.5, 7.0, 40.0, 600.0, 25_000.0] {
                ranges.push(vec![lo, lo + width]);
            }
        }
        for values in &ranges {
            for axis in [
                tok(Scale::Linear),
                tok(Scale::Log2),
                count(Scale::Linear),
                count(Scale::Log2),
                Axis {
                    from_zero: false,
                    ..tok(Scale::Linear)
                },
            ] {
                for max in [12, 6] {
                    let labels = written(&axis, values, max);
                    assert!(!repeats(&labels), "{values:?} {:?}: {labels:?}", axis.scale);
                }
            }
        }
        // The check has teeth: the linear tok/s axis of 45.2 to 46.1
        // (from_zero off, as an x axis) had "45 45 46 46 46".
        let (lo, hi) = range(Scale::Linear, [45.2, 46.1].into_iter(), false);
        let plain: Vec<String> = crate::render::charts::key_points(lo, hi, 7)
            .into_iter()
            .map(format::tok_per_s_short)
            .collect();
        assert!(repeats(&plain), "{plain:?}");
    }
}
