//! Tables whose rows are coloured by their status (paced points, sessions
//! windows and their turns): the columns some row has a value in, each
//! row's cells, a dash for none. `templates/status_table.html` draws one.

use crate::model::Status;
use crate::model::format::DASH;

/// A column: its header and a row's text in it, if the row has one.
pub type Column<T> = (&'static str, fn(&T) -> Option<String>);

pub struct StatusTable {
    /// The id of the heading or caption that names the table.
    pub labelled_by: &'static str,
    /// The table's CSS class beside `data`.
    pub class: &'static str,
    pub columns: Vec<&'static str>,
    pub rows: Vec<StatusRow>,
}

pub struct StatusRow {
    /// The status's CSS class.
    pub class: &'static str,
    pub cells: Vec<String>,
}

impl StatusTable {
    /// `items` in rows, with the `columns` any of them has a value in.
    pub fn of<T>(
        labelled_by: &'static str,
        class: &'static str,
        items: &[&T],
        columns: &[Column<T>],
        status: impl Fn(&T) -> Status,
    ) -> StatusTable {
        let shown: Vec<&Column<T>> = columns
            .iter()
            .filter(|(_, text)| items.iter().any(|i| text(i).is_some()))
            .collect();
        StatusTable {
            labelled_by,
            class,
            columns: shown.iter().map(|(header, _)| *header).collect(),
            rows: items
                .iter()
                .map(|i| StatusRow {
                    class: status(i).css_class(),
                    cells: shown
                        .iter()
                        .map(|(_, text)| text(i).unwrap_or_else(|| DASH.to_string()))
                        .collect(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_columns_some_row_has_are_shown_and_a_missing_value_is_a_dash() {
        let columns: [Column<(u32, Option<u32>)>; 3] = [
            ("A", |r| Some(r.0.to_string())),
            ("B", |r| r.1.map(|b| b.to_string())),
            ("Never", |_| None),
        ];
        let t = StatusTable::of("h", "x", &[&(1, Some(2)), &(3, None)], &columns, |r| {
            if r.1.is_some() {
                Status::Valid
            } else {
                Status::Error
            }
        });
        assert_eq!(t.columns, ["A", "B"]);
        assert_eq!(t.rows[0].cells, ["1", "2"]);
        assert_eq!(t.rows[1].cells, ["3", DASH]);
        assert_eq!(t.rows[1].class, Status::Error.css_class());
    }
}
