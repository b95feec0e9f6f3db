//! Reading other tools' JSON: Python's non-standard numbers, and field
//! access whose errors name the file, the JSON path and what was expected.

use std::path::Path;

use anyhow::bail;
use serde_json::Value;

/// Parses JSON as Python's `json.dump` writes it: bare `NaN`, `Infinity` and
/// `-Infinity` (which strict JSON forbids) become the strings "NaN",
/// "Infinity" and "-Infinity", so a figure the tool could not compute reads
/// as not a number instead of failing the whole file.
pub fn parse_python_json(file: &Path, text: &str) -> anyhow::Result<Value> {
    parse_at_line(file, text, 0)
}

/// [`parse_python_json`] for one line of a JSONL file: positions in errors
/// are the file's (`line_no` is 1-based).
pub(crate) fn parse_python_json_line(
    file: &Path,
    line: &str,
    line_no: usize,
) -> anyhow::Result<Value> {
    parse_at_line(file, line, line_no - 1)
}

fn parse_at_line(file: &Path, text: &str, lines_before: usize) -> anyhow::Result<Value> {
    let cleaned = quote_non_finite(text);
    serde_json::from_str(&cleaned).map_err(|e| {
        let what = if e.is_eof() {
            "the file ends early (truncated?)"
        } else {
            "not JSON"
        };
        // serde_json's message ends with its own position; ours replaces it.
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or_default();
        anyhow::anyhow!(
            "{}: line {}, column {}: {what}: {message}",
            file.display(),
            e.line() + lines_before,
            e.column()
        )
    })
}

/// Parses YAML as guidellm writes it (`benchmarks.yaml`) into the same JSON
/// value its JSON output gives; errors name the line and column. `.inf` and
/// `.nan` have no JSON number and read as null, as a missing figure.
pub(crate) fn parse_yaml(file: &Path, text: &str) -> anyhow::Result<Value> {
    yaml_serde::from_str::<Value>(text).map_err(|e| {
        let place = e.location().map_or_else(String::new, |l| {
            format!("line {}, column {}: ", l.line(), l.column())
        });
        anyhow::anyhow!("{}: {place}not YAML: {e}", file.display())
    })
}

/// Quotes the bare words NaN / Infinity / -Infinity outside strings. Offsets
/// of everything else are kept, so error positions still point into the file.
fn quote_non_finite(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let mut in_string = false;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match c {
                '\\' => {
                    let n = c.len_utf8() + rest[1..].chars().next().map_or(0, char::len_utf8);
                    out.push_str(&rest[..n]);
                    rest = &rest[n..];
                    continue;
                }
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(word) = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|w| rest.starts_with(w))
        {
            out.push('"');
            out.push_str(word);
            out.push('"');
            rest = &rest[word.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A JSON value with where it came from, for errors that point at it.
#[derive(Clone)]
pub struct At<'a> {
    pub file: &'a Path,
    /// Dotted path from the top of the file (`benchmarks[0].config`), empty at the top.
    pub path: String,
    pub value: &'a Value,
}

impl<'a> At<'a> {
    pub fn root(file: &'a Path, value: &'a Value) -> At<'a> {
        At {
            file,
            path: String::new(),
            value,
        }
    }

    /// The value under a dotted `path` ("config.strategy"; a number is an
    /// array index), when every step is there and it is not null.
    pub fn child(&self, path: &str) -> Option<At<'a>> {
        let mut at = self.clone();
        for key in path.split('.') {
            // A number steps into an array: "internal_states.0.model_path".
            if let (Value::Array(_), Ok(i)) = (at.value, key.parse::<usize>()) {
                at = at.element(i).filter(|a| !a.value.is_null())?;
                continue;
            }
            let value = at.value.get(key).filter(|v| !v.is_null())?;
            at = At {
                file: at.file,
                path: at.child_path(key),
                value,
            };
        }
        Some(at)
    }

    /// The first of `paths` that is there.
    pub(crate) fn first_child(&self, paths: &[&str]) -> Option<At<'a>> {
        paths.iter().find_map(|p| self.child(p))
    }

    /// The object at `path`, which must be there.
    pub fn required(&self, path: &str, what: &str) -> anyhow::Result<At<'a>> {
        self.child(path)
            .ok_or_else(|| self.field_error(path, what, None))
    }

    /// The `i`-th element of this array.
    pub fn element(&self, i: usize) -> Option<At<'a>> {
        let value = self.value.as_array()?.get(i)?;
        Some(At {
            file: self.file,
            path: format!("{}[{i}]", self.path),
            value,
        })
    }

    /// The elements of this array, located; none when it is not an array.
    pub(crate) fn elements(&self) -> Vec<At<'a>> {
        (0..self.value.as_array().map_or(0, Vec::len))
            .filter_map(|i| self.element(i))
            .collect()
    }

    /// The keys of this object, for errors that say what a file holds.
    pub fn keys(&self) -> String {
        match self.value.as_object() {
            Some(m) if !m.is_empty() => m.keys().cloned().collect::<Vec<_>>().join(", "),
            _ => "nothing".into(),
        }
    }

    /// Where this value is, for messages: its path, or "top level".
    pub(crate) fn path_or_top(&self) -> &str {
        if self.path.is_empty() {
            "top level"
        } else {
            &self.path
        }
    }

    /// An error about this value: "file: path: message".
    pub fn error(&self, message: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{}: {}: {message}", self.file.display(), self.path_or_top())
    }

    fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn field_error(&self, key: &str, expected: &str, found: Option<&Value>) -> anyhow::Error {
        let found = match found {
            None | Some(Value::Null) => "nothing".to_string(),
            Some(v) => {
                let mut s = v.to_string();
                if s.len() > 40 {
                    s.truncate(40);
                    s.push('…');
                }
                s
            }
        };
        anyhow::anyhow!(
            "{}: {}: expected {expected}, found {found}",
            self.file.display(),
            self.child_path(key)
        )
    }

    /// A number that may be missing: absent, null or NaN read as `None`; a
    /// string or an infinity is an error.
    pub(crate) fn opt_f64(&self, key: &str) -> anyhow::Result<Option<f64>> {
        match self.value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s == "NaN" => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            other => Err(self.field_error(key, "a finite number", other)),
        }
    }

    /// p10, p50 and p90 under this object's `p10`, `p50` and `p90` keys
    /// (scaled by `scale`), when the tool reports all three.
    pub(crate) fn spread(&self, scale: f64) -> anyhow::Result<Option<crate::model::Spread>> {
        Ok(
            match (
                self.opt_f64("p10")?,
                self.opt_f64("p50")?,
                self.opt_f64("p90")?,
            ) {
                (Some(p10), Some(p50), Some(p90)) => Some(crate::model::Spread {
                    p10: p10 * scale,
                    p50: p50 * scale,
                    p90: p90 * scale,
                }),
                _ => None,
            },
        )
    }

    pub fn f64(&self, key: &str) -> anyhow::Result<f64> {
        self.opt_f64(key)?
            .ok_or_else(|| self.field_error(key, "a finite number", self.value.get(key)))
    }

    /// A number > 0, such as a duration that figures are divided by.
    pub(crate) fn positive(&self, key: &str) -> anyhow::Result<f64> {
        let v = self.f64(key)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.field_error(key, "a number above 0", self.value.get(key)))
        }
    }

    pub(crate) fn opt_u64(&self, key: &str) -> anyhow::Result<Option<u64>> {
        match self.value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
                (Some(v), _) => Ok(Some(v)),
                // 8192.0: Python wrote an integer as a float.
                (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 => Ok(Some(f as u64)),
                _ => Err(self.field_error(key, "a whole number >= 0", self.value.get(key))),
            },
            other => Err(self.field_error(key, "a whole number >= 0", other)),
        }
    }

    pub fn u64(&self, key: &str) -> anyhow::Result<u64> {
        self.opt_u64(key)?
            .ok_or_else(|| self.field_error(key, "a whole number >= 0", self.value.get(key)))
    }

    pub(crate) fn opt_str(&self, key: &str) -> anyhow::Result<Option<&'a str>> {
        match self.value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            other => Err(self.field_error(key, "a string", other)),
        }
    }

    pub(crate) fn opt_bool(&self, key: &str) -> anyhow::Result<Option<bool>> {
        match self.value.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            other => Err(self.field_error(key, "true or false", other)),
        }
    }

    /// A string at a dotted path, when it is there.
    pub(crate) fn str_at(&self, path: &str) -> Option<&'a str> {
        self.child(path).and_then(|a| a.value.as_str())
    }

    /// A finite number at a dotted path, when it is there.
    pub(crate) fn f64_at(&self, path: &str) -> Option<f64> {
        self.child(path).and_then(|a| a.value.as_f64())
    }

    /// The object at `key`, which must be there.
    pub fn object(&self, key: &str) -> anyhow::Result<&'a Value> {
        match self.value.get(key) {
            Some(v @ Value::Object(_)) => Ok(v),
            other => Err(self.field_error(key, "an object", other)),
        }
    }

    /// The array at `key`, which must be there.
    pub(crate) fn array(&self, key: &str) -> anyhow::Result<&'a [Value]> {
        match self.value.get(key) {
            Some(Value::Array(a)) => Ok(a),
            other => Err(self.field_error(key, "an array", other)),
        }
    }
}

/// `path` of the `i`-th element of the array at `key` under `parent`.
pub(crate) fn element_path(parent: &str, key: &str, i: usize) -> String {
    if parent.is_empty() {
        format!("{key}[{i}]")
    } else {
        format!("{parent}.{key}[{i}]")
    }
}

/// Checks a top-level value is an object before fields are read from it.
pub(crate) fn expect_object(file: &Path, value: &Value, what: &str) -> anyhow::Result<()> {
    if !value.is_object() {
        bail!("{}: expected {what} (a JSON object)", file.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_non_finite_numbers_become_strings_outside_strings_only() {
        let v = parse_python_json(
            Path::new("r.json"),
            r#"{"a": NaN, "b": -Infinity, "c": [Infinity], "d": "NaN \"Infinity\""}"#,
        )
        .unwrap();
        assert_eq!(v["a"], "NaN");
        assert_eq!(v["b"], "-Infinity");
        assert_eq!(v["c"][0], "Infinity");
        assert_eq!(v["d"], "NaN \"Infinity\"");
    }

    #[test]
    fn a_truncated_file_says_so_with_its_position() {
        let err = parse_python_json(Path::new("r.json"), "{\"a\": [1, 2")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("r.json: line 1, column 11: the file ends early"),
            "{err}"
        );
    }

    #[test]
    fn field_errors_name_the_file_the_path_and_what_was_expected() {
        let v = serde_json::json!({"x": {"d": "Infinity", "n": 8192.0, "z": 0}});
        let root = At::root(Path::new("r.json"), &v);
        let x = root.child("x").unwrap();
        assert_eq!(x.opt_u64("n").unwrap(), Some(8192));
        assert_eq!(
            x.f64("d").unwrap_err().to_string(),
            "r.json: x.d: expected a finite number, found \"Infinity\""
        );
        assert_eq!(
            x.positive("z").unwrap_err().to_string(),
            "r.json: x.z: expected a number above 0, found 0"
        );
        assert_eq!(
            x.f64("gone").unwrap_err().to_string(),
            "r.json: x.gone: expected a finite number, found nothing"
        );
    }
}
