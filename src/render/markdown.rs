//! Markdown notes (`notes.md`) to HTML that is safe to inline in a page.
//!
//! Raw HTML in the notes is shown as text, not interpreted. Links keep only
//! safe targets, and images from other hosts become plain links, so a page
//! never loads anything from another host.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

/// Whether a link target may be followed: relative paths, anchors, http(s), mailto.
fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        // A colon before any '/', '?' or '#' means a scheme.
        Some((scheme, _)) if !scheme.contains(['/', '?', '#']) => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// Whether an image can be loaded without leaving the site's origin.
fn local_resource(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    !lower.starts_with("//") && !lower.contains(':')
}

pub fn render_markdown(text: &str) -> String {
    let mut in_remote_image = 0usize;
    let events = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(
        |event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: if safe_link(&dest_url) {
                    dest_url
                } else {
                    CowStr::Borrowed("#")
                },
                title,
                id,
            }),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                if local_resource(&dest_url) {
                    Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    })
                } else {
                    in_remote_image += 1;
                    let dest_url = if safe_link(&dest_url) {
                        dest_url
                    } else {
                        CowStr::Borrowed("#")
                    };
                    Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    })
                }
            }
            Event::End(TagEnd::Image) if in_remote_image > 0 => {
                in_remote_image -= 1;
                Event::End(TagEnd::Link)
            }
            other => other,
        },
    );
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_shown_as_text() {
        let out = render_markdown("Hi <script>alert(1)</script>\n\n<div onclick=x>b</div>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<div"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn unsafe_links_are_neutralised_and_remote_images_become_links() {
        let out = render_markdown("[a](javascript:alert(1)) [b](https://x.org/) [c](../other/)");
        assert!(out.contains(r##"<a href="#">a</a>"##), "{out}");
        assert!(out.contains(r#"href="https://x.org/""#));
        assert!(out.contains(r#"href="../other/""#));
        let out = render_markdown("![plot](https://cdn.example.com/p.png) ![local](p.png)");
        assert!(!out.contains("cdn.example.com/p.png\" alt"), "{out}");
        assert!(
            out.contains(r#"<a href="https://cdn.example.com/p.png">plot</a>"#),
            "{out}"
        );
        assert!(out.contains(r#"<img src="p.png" alt="local""#), "{out}");
    }

    #[test]
    fn markdown_formatting_is_rendered() {
        let out = render_markdown("**Speculative decoding** with `dflash`.");
        assert_eq!(
            out,
            "<p><strong>Speculative decoding</strong> with <code>dflash</code>.</p>\n"
        );
    }
}
