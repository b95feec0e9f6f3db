//! The commands over the data: `sitegen build` ([`pipeline`]), a local
//! preview that rebuilds on change ([`serve`]), the CI gate ([`check`]) and
//! a new results repository ([`init`]); runs in another tool's format
//! ([`export`]); [`site`] puts the pages and
//! downloads together and [`output`] is the one writer into `site/`.

pub mod check;
pub mod export;
pub mod init;
pub mod output;
pub mod pipeline;
pub mod rebuild;
pub mod reuse;
pub mod serve;
pub mod site;
pub mod sources;

/// Keeps this process off transparent huge pages (Linux). mimalloc asks for
/// them on its memory, and each is a 2 MB page the kernel zeroes on first
/// touch, often from memory this VM had not been handed lately: at 1,000
/// runs that nearly doubled a build's peak memory (100-128 MB, not 62-72),
/// and in one profile 23% of the build's CPU was that zeroing
/// (docs/development.md). What `MIMALLOC_ALLOW_THP=0` does, set here since
/// that option is read before `main`.
pub fn without_huge_pages() {
    // A kernel without the flag (before 3.15) leaves the pages as they were.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}
