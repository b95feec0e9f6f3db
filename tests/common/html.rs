//! Reading built pages with an HTML parser: the helpers every page test
//! would otherwise write again.

use scraper::{ElementRef, Selector};

/// A CSS selector the test knows to be valid.
pub fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// An element's text with its whitespace collapsed, as a reader sees it.
pub fn text(e: ElementRef) -> String {
    e.text()
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
