//! Checks over a built site's files: internal links and anchors, page weight.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use scraper::{Html, Selector};

/// Every page's HTML, keyed by its path relative to the site root.
fn pages(site: &Path) -> HashMap<String, Html> {
    super::files_under(site)
        .into_iter()
        .filter(|(rel, _)| rel.ends_with(".html"))
        .map(|(rel, bytes)| {
            (
                rel,
                Html::parse_document(&String::from_utf8(bytes).unwrap()),
            )
        })
        .collect()
}

/// Joins a relative URL path onto a page's folder, resolving "." and "..".
fn resolve(page: &str, target: &str) -> Option<String> {
    let mut parts: Vec<String> = Path::new(page)
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for c in PathBuf::from(target).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    let mut path = parts.join("/");
    if target.ends_with('/') || target.is_empty() {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str("index.html");
    }
    Some(path)
}

/// Problems with links: a target file that does not exist, an anchor with no
/// element of that id, a resource loaded from another host.
pub fn link_problems(site: &Path) -> Vec<String> {
    let pages = pages(site);
    let ids: HashMap<&String, HashSet<String>> = pages
        .iter()
        .map(|(rel, html)| {
            let set = html
                .select(&Selector::parse("[id]").unwrap())
                .filter_map(|e| e.value().attr("id").map(str::to_string))
                .collect();
            (rel, set)
        })
        .collect();
    let mut problems = Vec::new();
    let links = Selector::parse("a[href], link[href], script[src], img[src]").unwrap();
    let mut rels: Vec<&String> = pages.keys().collect();
    rels.sort();
    for rel in rels {
        for el in pages[rel].select(&links) {
            let url = el.value().attr("href").or(el.value().attr("src")).unwrap();
            let is_anchor_tag = el.value().name() == "a";
            if url.starts_with("data:") {
                continue;
            }
            if url.contains("://") || url.starts_with("//") || url.starts_with("mailto:") {
                if !is_anchor_tag {
                    problems.push(format!("{rel}: loads {url} from another host"));
                }
                continue;
            }
            let (path, fragment) = match url.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (url, None),
            };
            let target = if path.is_empty() {
                Some(rel.clone())
            } else {
                resolve(rel, path)
            };
            let Some(target) = target else {
                problems.push(format!("{rel}: {url} points outside the site"));
                continue;
            };
            if !site.join(&target).is_file() {
                problems.push(format!(
                    "{rel}: {url} does not resolve ({target} is missing)"
                ));
                continue;
            }
            if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
                let has = ids.get(&target).is_some_and(|set| set.contains(fragment));
                if !has {
                    problems.push(format!(
                        "{rel}: {url}: no element with id {fragment:?} in {target}"
                    ));
                }
            }
        }
    }
    problems
}

/// Pages heavier than `limit` bytes, with what they weigh.
pub fn heavy_pages(site: &Path, limit: usize) -> Vec<String> {
    super::files_under(site)
        .into_iter()
        .filter(|(rel, bytes)| rel.ends_with(".html") && bytes.len() > limit)
        .map(|(rel, bytes)| format!("{rel}: {} bytes (limit {limit})", bytes.len()))
        .collect()
}

/// Problems with ids: one that is empty or holds whitespace (not a valid HTML
/// id), one used twice in a page, and an `aria-labelledby`, `aria-describedby`
/// or `for` that names no id of its page.
pub fn id_problems(site: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut all: Vec<(String, Html)> = pages(site).into_iter().collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let with_id = Selector::parse("[id]").unwrap();
    let referring = Selector::parse("[aria-labelledby], [aria-describedby], label[for]").unwrap();
    for (rel, html) in &all {
        let mut seen = HashSet::new();
        for e in html.select(&with_id) {
            let id = e.value().attr("id").unwrap_or_default();
            if id.is_empty() || id.chars().any(char::is_whitespace) {
                problems.push(format!("{rel}: id {id:?} is not a valid HTML id"));
            }
            if !seen.insert(id.to_string()) {
                problems.push(format!("{rel}: id {id:?} is used twice"));
            }
        }
        for e in html.select(&referring) {
            for attr in ["aria-labelledby", "aria-describedby", "for"] {
                for id in e.value().attr(attr).unwrap_or_default().split_whitespace() {
                    if !seen.contains(id) {
                        problems.push(format!("{rel}: {attr}=\"{id}\" names no element"));
                    }
                }
            }
        }
    }
    problems
}

/// Tick labels a chart drawing writes twice on one axis, as "page: chart
/// (drawing): axis: labels". plotters writes an x tick label centred and
/// hung below its line (text-anchor middle, dy 0.76em), every one of an
/// axis at one y; a y tick label right-aligned (text-anchor end), every one
/// at one x. Axis titles are rotated or alone on their line.
pub fn repeated_tick_labels(site: &Path) -> Vec<String> {
    let svg = Selector::parse("svg").unwrap();
    let text = Selector::parse("text").unwrap();
    let mut pages: Vec<(String, Html)> = pages(site).into_iter().collect();
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    let mut problems = Vec::new();
    for (rel, page) in &pages {
        for drawing in page.select(&svg) {
            let name = format!(
                "{} ({})",
                drawing.value().attr("aria-label").unwrap_or("a chart"),
                drawing.value().attr("class").unwrap_or("")
            );
            let mut axes: std::collections::BTreeMap<String, Vec<String>> = Default::default();
            for t in drawing.select(&text) {
                let e = t.value();
                let label = t.text().collect::<String>().trim().to_string();
                if label.is_empty() || e.attr("transform").is_some() {
                    continue;
                }
                let axis = match (e.attr("text-anchor"), e.attr("dy")) {
                    (Some("middle"), Some("0.76em")) => {
                        format!("x axis at y={}", e.attr("y").unwrap_or("?"))
                    }
                    (Some("end"), _) => format!("y axis at x={}", e.attr("x").unwrap_or("?")),
                    _ => continue,
                };
                axes.entry(axis).or_default().push(label);
            }
            for (axis, labels) in axes {
                let repeated = (1..labels.len()).any(|i| labels[..i].contains(&labels[i]));
                if repeated {
                    problems.push(format!("{rel}: {name}: {axis}: {}", labels.join(" ")));
                }
            }
        }
    }
    problems
}
