//! A small Rust lexer for the house rules: which text of a source file is comment and which
//! is code, line by line, with string and character literals blanked out of the code.

/// One source line split into the comment text on it (of `//`, `///`, `//!` and `/* */`
/// comments) and its code with literals replaced by spaces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The comment text on the line (several comments joined by a space).
    pub comment: String,
    /// The code on the line, string and character literals blanked.
    pub code: String,
}

/// Splits `source` into [`Line`]s (one per line of the file, in order).
pub fn lines(source: &str) -> Vec<Line> {
    let mut lexer = Lexer {
        chars: source.chars().collect(),
        at: 0,
        lines: vec![Line::default()],
    };
    lexer.run();
    lexer.lines
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    lines: Vec<Line>,
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.at + k).copied()
    }

    fn line(&mut self) -> &mut Line {
        self.lines.last_mut().expect("at least one line")
    }

    /// Consumes one character into the code (`blank`: as a space) or the comment.
    fn take(&mut self, into_comment: bool, blank: bool) {
        let c = self.chars[self.at];
        self.at += 1;
        if c == '\n' {
            self.lines.push(Line::default());
            return;
        }
        if into_comment {
            self.line().comment.push(c);
        } else {
            self.line().code.push(if blank { ' ' } else { c });
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match (c, self.peek(1)) {
                ('/', Some('/')) => self.line_comment(),
                ('/', Some('*')) => self.block_comment(),
                ('"', _) => self.string(),
                ('r', Some('"' | '#')) if self.raw_string_start().is_some() => {
                    let hashes = self.raw_string_start().unwrap_or(0);
                    self.take(false, false);
                    self.raw_string(hashes);
                }
                ('b', Some('"')) => {
                    self.take(false, false);
                    self.string();
                }
                ('b', Some('r')) if self.at_raw_after(1) => {
                    self.take(false, false);
                    let hashes = self.raw_string_start().unwrap_or(0);
                    self.take(false, false);
                    self.raw_string(hashes);
                }
                ('b', Some('\'')) => {
                    self.take(false, false);
                    self.char_or_lifetime();
                }
                ('\'', _) => self.char_or_lifetime(),
                _ if c.is_alphanumeric() || c == '_' => self.word(),
                _ => self.take(false, false),
            }
        }
    }

    /// A word (identifier or number) is copied whole, so that `br` or `r` inside one does not
    /// start a literal.
    fn word(&mut self) {
        while self
            .peek(0)
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            self.take(false, false);
        }
    }

    /// Whether `r` at offset `k` starts a raw string (`r"` or `r#...#"`).
    fn at_raw_after(&self, k: usize) -> bool {
        let mut i = self.at + k + 1;
        while self.chars.get(i) == Some(&'#') {
            i += 1;
        }
        self.chars.get(i) == Some(&'"')
    }

    /// At an `r`: the number of `#` of the raw string that starts here, if one does.
    fn raw_string_start(&self) -> Option<usize> {
        let mut i = self.at + 1;
        while self.chars.get(i) == Some(&'#') {
            i += 1;
        }
        (self.chars.get(i) == Some(&'"')).then_some(i - self.at - 1)
    }

    fn line_comment(&mut self) {
        self.line().comment.push(' ');
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.take(true, false);
        }
    }

    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            match (c, self.peek(1)) {
                ('/', Some('*')) => {
                    depth += 1;
                    self.take(true, false);
                    self.take(true, false);
                }
                ('*', Some('/')) => {
                    depth -= 1;
                    self.take(true, false);
                    self.take(true, false);
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.take(true, false),
            }
        }
    }

    /// A string literal from its opening quote (escapes honoured), blanked.
    fn string(&mut self) {
        self.take(false, false);
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    self.take(false, true);
                    if self.peek(0).is_some() {
                        self.take(false, true);
                    }
                }
                '"' => {
                    self.take(false, false);
                    return;
                }
                _ => self.take(false, true),
            }
        }
    }

    /// A raw string from its `#`s or opening quote, blanked.
    fn raw_string(&mut self, hashes: usize) {
        for _ in 0..=hashes {
            self.take(false, false);
        }
        while self.peek(0).is_some() {
            if self.peek(0) == Some('"') && (1..=hashes).all(|k| self.peek(k) == Some('#')) {
                for _ in 0..=hashes {
                    self.take(false, false);
                }
                return;
            }
            self.take(false, true);
        }
    }

    /// A character literal (`'a'`, `'\n'`, `'\u{1F600}'`) is blanked; a lifetime or label
    /// (`'a`, `'static`) is code.
    fn char_or_lifetime(&mut self) {
        let is_char = matches!(
            (self.peek(1), self.peek(2)),
            (Some('\\'), _) | (Some(_), Some('\''))
        );
        self.take(false, false);
        if !is_char {
            return;
        }
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    self.take(false, true);
                    self.take(false, true);
                }
                '\'' => {
                    self.take(false, false);
                    return;
                }
                '\n' => return,
                _ => self.take(false, true),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_code_are_told_apart_and_literals_blanked() {
        let src = "let a = \"// not a comment\"; // a comment\n\
                   /* block\n still */ let b = 'x'; let c: &'static str = r#\"q\"#;\n\
                   /// doc\nfn f<'a>() { let d = b'\\''; } /* x /* nested */ y */ z";
        let l = lines(src);
        assert_eq!(l.len(), 5);
        assert_eq!(l[0].comment.trim(), "// a comment");
        assert!(!l[0].code.contains("not a comment") && l[0].code.contains("let a"));
        assert_eq!(l[1].comment.trim(), "/* block");
        assert_eq!(l[2].comment.trim(), "still */");
        assert!(
            l[2].code.contains("'static") && !l[2].code.contains('x') && !l[2].code.contains('q')
        );
        assert_eq!(l[3].comment.trim(), "/// doc");
        assert!(l[4].code.contains("fn f<'a>") && l[4].code.trim_end().ends_with('z'));
        assert_eq!(l[4].comment.trim(), "/* x /* nested */ y */");
    }
}
