//! `runs/<id>/data.json`: a run with all its cells, as one document.

use serde::Serialize;

use crate::model::{Cell, Run, RunMeta};

#[derive(Serialize)]
struct RunDocument<'a> {
    id: &'a str,
    #[serde(flatten)]
    meta: &'a RunMeta,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes_markdown: Option<&'a str>,
    cells: &'a [Cell],
}

pub fn run_json(run: &Run) -> String {
    crate::store::to_json(&RunDocument {
        id: &run.id,
        meta: &run.meta,
        notes_markdown: run.notes_markdown.as_deref(),
        cells: &run.cells,
    })
}
