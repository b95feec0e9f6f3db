//! Colour scales for the decode matrix, and text colours that stay readable on them.
//!
//! Viridis is perceptually uniform and readable with the common forms of colour
//! blindness. Text on a cell is black or white, whichever contrasts more; with
//! those two the contrast ratio is never below 4.58:1 (WCAG AA asks 4.5:1).

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub(crate) fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// WCAG relative luminance.
    pub(crate) fn luminance(self) -> f64 {
        fn channel(c: u8) -> f64 {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        }
        0.2126 * channel(self.0) + 0.7152 * channel(self.1) + 0.0722 * channel(self.2)
    }
}

pub(crate) const BLACK: Rgb = Rgb(0, 0, 0);
pub(crate) const WHITE: Rgb = Rgb(255, 255, 255);

/// WCAG contrast ratio between two colours (1 to 21).
pub(crate) fn contrast_ratio(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (a.luminance(), b.luminance());
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// Black or white, whichever reads better on `background`.
pub(crate) fn text_colour_on(background: Rgb) -> Rgb {
    if contrast_ratio(background, BLACK) >= contrast_ratio(background, WHITE) {
        BLACK
    } else {
        WHITE
    }
}

/// Viridis at 11 evenly spaced stops (matplotlib's table).
const VIRIDIS: [Rgb; 11] = [
    Rgb(0x44, 0x01, 0x54),
    Rgb(0x48, 0x28, 0x78),
    Rgb(0x3e, 0x4a, 0x89),
    Rgb(0x31, 0x68, 0x8e),
    Rgb(0x26, 0x82, 0x8e),
    Rgb(0x1f, 0x9e, 0x89),
    Rgb(0x35, 0xb7, 0x79),
    Rgb(0x6d, 0xcd, 0x59),
    Rgb(0xb4, 0xde, 0x2c),
    Rgb(0xd8, 0xe2, 0x19),
    Rgb(0xfd, 0xe7, 0x25),
];

/// Viridis at `t` in [0, 1] (clamped): dark purple for low, yellow for high.
pub(crate) fn viridis(t: f64) -> Rgb {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    mix(VIRIDIS[i], VIRIDIS[i + 1], f)
}

/// The colour `t` of the way from `a` to `b`.
fn mix(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let channel = |p: u8, q: u8| (f64::from(p) + (f64::from(q) - f64::from(p)) * t).round() as u8;
    Rgb(channel(a.0, b.0), channel(a.1, b.1), channel(a.2, b.2))
}

/// Steps of the diverging ratio scale per doubling: the scale is a table of
/// `2 × RATIO_STEPS + 1` colours, which the comparison built in the browser
/// reads too, so both colour a ratio alike.
pub(crate) const RATIO_STEPS: usize = 100;

/// The step of the ratio scale a ratio falls on: log2 of it, clamped to
/// [-1, 1], in steps of 1 / `RATIO_STEPS`, rounded to the nearest (halves up).
pub fn ratio_step(r: f64) -> usize {
    let t = r.log2().clamp(-1.0, 1.0);
    ((t + 1.0) * RATIO_STEPS as f64).round() as usize
}

/// How a ratio cell is shaded: its direction as a CSS class ("faster"
/// above 1, "slower" below, "even" on parity) and its strength, the step's
/// distance from parity in [0, 1], as `--shade:0.37`. static/style.css
/// mixes the scheme's faster or slower colour into the page background by
/// that much, so parity is the page's own background, light or dark.
pub fn ratio_shade(r: f64) -> (&'static str, String) {
    let step = ratio_step(r) as i64 - RATIO_STEPS as i64;
    let class = match step.signum() {
        1 => "faster",
        -1 => "slower",
        _ => "even",
    };
    let strength = step.unsigned_abs() as f64 / RATIO_STEPS as f64;
    (
        class,
        format!("--shade:{}", crate::model::format::grouped(strength, 2)),
    )
}

/// The inline style of a table cell filled with `background`, with the text
/// colour that reads on it.
pub(crate) fn fill_style(background: Rgb) -> String {
    format!(
        "background-color:{};color:{}",
        background.hex(),
        text_colour_on(background).hex()
    )
}

/// Maps values onto [0, 1] on a log scale between the smallest and largest,
/// so 150 and 300 tok/s differ as much as 1,500 and 3,000.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LogScale {
    pub min: f64,
    pub max: f64,
}

impl LogScale {
    /// A scale over the positive finite values, or `None` if there are none.
    pub fn over(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        values
            .into_iter()
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold(None, |acc: Option<LogScale>, v| match acc {
                None => Some(LogScale { min: v, max: v }),
                Some(s) => Some(LogScale {
                    min: s.min.min(v),
                    max: s.max.max(v),
                }),
            })
    }

    pub fn position(&self, value: f64) -> f64 {
        if self.max <= self.min {
            return 1.0;
        }
        ((value.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scale_colour_has_a_text_colour_with_aa_contrast() {
        for i in 0..=1000 {
            let bg = viridis(f64::from(i) / 1000.0);
            let ratio = contrast_ratio(bg, text_colour_on(bg));
            assert!(ratio >= 4.5, "{} has only {ratio:.2}:1", bg.hex());
        }
    }

    #[test]
    fn contrast_ratio_matches_wcag_reference_values() {
        assert!((contrast_ratio(BLACK, WHITE) - 21.0).abs() < 1e-9);
        assert!((contrast_ratio(Rgb(0x77, 0x77, 0x77), WHITE) - 4.48).abs() < 0.01);
    }

    #[test]
    fn viridis_ends_and_clamps() {
        assert_eq!(viridis(0.0).hex(), "#440154");
        assert_eq!(viridis(1.0).hex(), "#fde725");
        assert_eq!(viridis(2.0), viridis(1.0));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        assert_eq!(text_colour_on(viridis(0.0)), WHITE);
        assert_eq!(text_colour_on(viridis(1.0)), BLACK);
    }

    #[test]
    fn log_scale_positions() {
        let s = LogScale::over([100.0, 1000.0, f64::NAN, 0.0]).unwrap();
        assert_eq!((s.min, s.max), (100.0, 1000.0));
        assert!((s.position(316.227_766) - 0.5).abs() < 1e-6);
        assert_eq!(s.position(5.0), 0.0);
        assert_eq!(LogScale::over([7.0]).unwrap().position(7.0), 1.0);
        assert_eq!(LogScale::over([]), None);
    }
}
