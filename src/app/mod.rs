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
pub mod serve;
pub mod site;
