//! Where a key path is in the scene text: its span, line and column, and which key a TOML
//! reader error points at. Every [`SceneError`] that comes from the file's content uses it.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::SceneError;
use super::validate::Ctx;

enum Seg<'k> {
    Key(&'k str),
    Index(usize),
}

fn split_path(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        out.push(Seg::Key(name));
        while let Some(close) = rest.find(']') {
            if let Ok(i) = rest[1..close].parse() {
                out.push(Seg::Index(i));
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

fn span_contains(span: &Range<usize>, pos: usize) -> bool {
    span.start <= pos && pos < span.end
}

/// Deepest key path whose key or value span contains byte offset `pos`.
fn path_in_table(table: &DeTable<'_>, pos: usize, prefix: &str) -> Option<String> {
    for (k, v) in table.iter() {
        let p = if prefix.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{prefix}.{}", k.get_ref())
        };
        if let Some(deeper) = path_in_value(v.get_ref(), pos, &p) {
            return Some(deeper);
        }
        if span_contains(&k.span(), pos) || span_contains(&v.span(), pos) {
            return Some(p);
        }
    }
    None
}

fn path_in_value(value: &DeValue<'_>, pos: usize, prefix: &str) -> Option<String> {
    match value {
        DeValue::Table(t) => path_in_table(t, pos, prefix),
        DeValue::Array(a) => a.iter().enumerate().find_map(|(i, item)| {
            let p = format!("{prefix}[{i}]");
            path_in_value(item.get_ref(), pos, &p)
                .or_else(|| span_contains(&item.span(), pos).then_some(p))
        }),
        _ => None,
    }
}

impl Ctx<'_> {
    /// 1-based line and column (in characters) of byte offset `pos`.
    pub(super) fn line_column(&self, pos: usize) -> (usize, usize) {
        let pos = pos.min(self.text.len());
        let mut pos = pos;
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    /// Span of the value at `path`, or of its deepest present ancestor below the root.
    pub(super) fn span_of(&self, path: &str) -> Option<Range<usize>> {
        let doc = self.doc?;
        let mut value: Option<&Spanned<DeValue<'_>>> = None;
        let mut table: Option<&DeTable<'_>> = Some(doc.get_ref());
        for seg in split_path(path) {
            let next = match (seg, value.map(|v| v.get_ref())) {
                (Seg::Key(name), None) => table
                    .and_then(|t| t.iter().find(|(k, _)| k.get_ref() == name))
                    .map(|(_, v)| v),
                (Seg::Key(name), Some(DeValue::Table(t))) => {
                    t.iter().find(|(k, _)| k.get_ref() == name).map(|(_, v)| v)
                }
                (Seg::Index(i), Some(DeValue::Array(a))) => a.get(i),
                _ => None,
            };
            match next {
                Some(v) => {
                    value = Some(v);
                    table = None;
                }
                None => break,
            }
        }
        value.map(|v| v.span())
    }

    pub(super) fn location_of(&self, path: &str) -> (Option<usize>, Option<usize>) {
        match self.span_of(path) {
            Some(s) => {
                let (l, c) = self.line_column(s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        }
    }

    pub(super) fn parse_error(&self, e: &toml::de::Error) -> SceneError {
        let message = e.message().trim().to_owned();
        let span = e.span();
        // An empty span marks the document root or a syntax error between tokens: no key.
        let mut key = match (self.doc, &span) {
            (Some(doc), Some(s)) if !s.is_empty() => path_in_table(doc.get_ref(), s.start, ""),
            _ => None,
        };
        // "missing field `x`" is reported at the enclosing table: name the missing key.
        if let Some(rest) = message.strip_prefix("missing field `")
            && let Some(field) = rest.split('`').next()
        {
            key = Some(match key {
                Some(k) => format!("{k}.{field}"),
                None => field.to_owned(),
            });
        }
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = self.line_column(s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        SceneError::Parse {
            key: key.map(|k| cloth_mesh::sanitize_message(&k)),
            message: cloth_mesh::sanitize_message(&message),
            line,
            column,
        }
    }
}
