//! Scene key paths (`cloth.material.bend`, `solver.h_max`, `collider[1].path`,
//! `run.gravity[1]`) and setting one in a scene's TOML as written.
//!
//! Substitution works on the base scene *as written*, before defaults are applied, so values
//! that default from others stay derived (an axis on `run.fps` moves the default `solver.h_max`
//! with it). Missing tables on the way are created (`solver.h_max` in a scene without
//! `[solver]`); array entries are never created (`collider[2]` needs three colliders in the base);
//! a material given as a preset name becomes `{ preset = NAME }` when a key inside it is set.
//! Whether the key exists in the scene format is left to the scene loader, which refuses unknown
//! keys and wrong types with the key path.

use toml::{Table, Value};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A parsed key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath {
    text: String,
    segs: Vec<Seg>,
}

/// Default material preset of the scene format (`cloth.material`, see the README's key table).
const DEFAULT_MATERIAL: &str = "cotton";

impl KeyPath {
    /// Parses `a.b[2].c`: keys of letters, digits and `_`, each followed by any number of
    /// `[N]` indices.
    pub fn parse(text: &str) -> Result<KeyPath, String> {
        let bad = |why: &str| format!("`{text}` is not a key path ({why})");
        if text.is_empty() {
            return Err("the key path is empty".into());
        }
        let mut segs = Vec::new();
        for part in text.split('.') {
            let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(bad("keys are letters, digits and `_`, joined by `.`"));
            }
            segs.push(Seg::Key(name.to_owned()));
            while !rest.is_empty() {
                let close = rest
                    .find(']')
                    .filter(|_| rest.starts_with('['))
                    .ok_or_else(|| bad("indices are written `[N]`"))?;
                let i = rest[1..close]
                    .parse::<usize>()
                    .map_err(|_| bad("indices are written `[N]`"))?;
                segs.push(Seg::Index(i));
                rest = &rest[close + 1..];
            }
        }
        Ok(KeyPath {
            text: text.to_owned(),
            segs,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the last key names a file (`path`) or a file pattern (`frames`): string values
    /// for it are relative to the manifest, not to the base scene.
    pub fn is_file_key(&self) -> bool {
        matches!(self.segs.last(), Some(Seg::Key(k)) if k == "path" || k == "frames")
    }

    /// Sets the value at this path in `doc` (see the module docs for what is created).
    pub fn set(&self, doc: &mut Table, value: Value) -> Result<(), String> {
        let mut value = Some(value);
        let mut node: &mut Value = {
            // The root is a table; step into its first key by hand.
            let Seg::Key(first) = &self.segs[0] else {
                unreachable!("a key path starts with a key")
            };
            if self.segs.len() == 1 {
                doc.insert(first.clone(), value.take().expect("set once"));
                return Ok(());
            }
            if let (None, Seg::Index(i)) = (doc.get(first), &self.segs[1]) {
                return Err(missing_array(first, *i));
            }
            doc.entry(first.clone())
                .or_insert_with(|| Value::Table(Table::new()))
        };
        let mut walked = self.prefix(1);
        for (n, seg) in self.segs.iter().enumerate().skip(1) {
            let last = n + 1 == self.segs.len();
            // A preset name where a table is needed: only `cloth.material` has that form.
            if walked == "cloth.material"
                && let Value::String(name) = node
            {
                let mut t = Table::new();
                t.insert("preset".into(), Value::String(name.clone()));
                *node = Value::Table(t);
            }
            node = match (seg, node) {
                (Seg::Key(k), Value::Table(t)) => {
                    if last {
                        t.insert(k.clone(), value.take().expect("set once"));
                        return Ok(());
                    }
                    let here = format!("{walked}.{k}");
                    if let (None, Some(Seg::Index(i))) = (t.get(k), self.segs.get(n + 1)) {
                        return Err(missing_array(&here, *i));
                    }
                    let default = if walked == "cloth" && k == "material" {
                        let mut t = Table::new();
                        t.insert("preset".into(), DEFAULT_MATERIAL.into());
                        Value::Table(t)
                    } else {
                        Value::Table(Table::new())
                    };
                    t.entry(k.clone()).or_insert(default)
                }
                (Seg::Index(i), Value::Array(a)) => {
                    let len = a.len();
                    let slot = a.get_mut(*i).ok_or_else(|| {
                        format!(
                            "`{walked}` has {len} entr{} in the base scene, so `{walked}[{i}]` does not exist",
                            if len == 1 { "y" } else { "ies" }
                        )
                    })?;
                    if last {
                        *slot = value.take().expect("set once");
                        return Ok(());
                    }
                    slot
                }
                (Seg::Index(i), other) => {
                    return Err(format!(
                        "`{walked}` is {} in the base scene, not an array, so `{walked}[{i}]` does not exist",
                        describe(other)
                    ));
                }
                (Seg::Key(k), other) => {
                    return Err(format!(
                        "`{walked}` is {} in the base scene, not a table, so `{walked}.{k}` does not exist",
                        describe(other)
                    ));
                }
            };
            walked = self.prefix(n + 1);
        }
        unreachable!("the loop returns at the last segment")
    }

    /// The path's first `n` segments as text.
    fn prefix(&self, n: usize) -> String {
        let mut s = String::new();
        for seg in &self.segs[..n] {
            match seg {
                Seg::Key(k) if s.is_empty() => s.push_str(k),
                Seg::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }
}

fn missing_array(path: &str, i: usize) -> String {
    format!("the base scene has no `{path}`, so `{path}[{i}]` does not exist")
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// A value as it reads in a label or a message: strings bare, everything else as TOML.
pub fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn paths_parse_with_indices_and_refuse_malformed_text() {
        let p = KeyPath::parse("collider[1].path").unwrap();
        assert_eq!(
            p.segs,
            [
                Seg::Key("collider".into()),
                Seg::Index(1),
                Seg::Key("path".into())
            ]
        );
        assert!(p.is_file_key());
        assert!(!KeyPath::parse("solver.h_max").unwrap().is_file_key());
        for bad in ["", "a..b", "a[x]", "a[1", "a]", ".a", "a b", "a[-1]"] {
            assert!(KeyPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn setting_creates_tables_promotes_a_preset_and_never_creates_array_entries() {
        let mut d = doc("[cloth]\nmaterial = \"silk\"\n[[collider]]\nshape = \"plane\"\n");
        KeyPath::parse("solver.h_max")
            .unwrap()
            .set(&mut d, Value::Float(0.01))
            .unwrap();
        assert_eq!(d["solver"]["h_max"].as_float(), Some(0.01));
        KeyPath::parse("cloth.material.bend")
            .unwrap()
            .set(&mut d, Value::Float(1e-6))
            .unwrap();
        assert_eq!(d["cloth"]["material"]["preset"].as_str(), Some("silk"));
        assert_eq!(d["cloth"]["material"]["bend"].as_float(), Some(1e-6));
        KeyPath::parse("collider[0].friction")
            .unwrap()
            .set(&mut d, Value::Float(0.1))
            .unwrap();
        assert_eq!(d["collider"][0]["friction"].as_float(), Some(0.1));
        let e = KeyPath::parse("collider[1].friction")
            .unwrap()
            .set(&mut d, Value::Float(0.1))
            .unwrap_err();
        assert!(e.contains("`collider` has 1 entry"), "{e}");
        let e = KeyPath::parse("solver.h_max.x")
            .unwrap()
            .set(&mut d, Value::Float(0.1))
            .unwrap_err();
        assert!(e.contains("`solver.h_max` is a number"), "{e}");

        let e = KeyPath::parse("pin[0].vertices")
            .unwrap()
            .set(&mut d, Value::Float(0.1))
            .unwrap_err();
        assert!(e.contains("the base scene has no `pin`"), "{e}");
        let e = KeyPath::parse("cloth.extra[0]")
            .unwrap()
            .set(&mut d, Value::Float(0.1))
            .unwrap_err();
        assert!(e.contains("no `cloth.extra`"), "{e}");

        let mut d = doc("[cloth]\nmesh = { kind = \"grid\" }\n");
        KeyPath::parse("cloth.material.bend")
            .unwrap()
            .set(&mut d, Value::Float(1e-6))
            .unwrap();
        assert_eq!(d["cloth"]["material"]["preset"].as_str(), Some("cotton"));
    }
}
