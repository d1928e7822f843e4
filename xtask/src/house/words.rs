//! Rule (a): the words of the README, the docs and the comments describe the code as it is.
//! No line may hold a date, a commit hash, an issue number, the paper-summary numbering or
//! the phrases of a lab notebook ([`WORD_RULES`]). Checked: every `README.md` and
//! `docs/**/*.md` as a whole, and the comments (doc comments and plain ones) of every `.rs`
//! file, tests included.

use super::Finding;
use regex::Regex;
use std::collections::BTreeSet;
use std::path::Path;

/// The patterns and what a match is called in a finding.
pub const WORD_RULES: [(&str, &str); 4] = [
    (r"20[0-9][0-9]-[0-9][0-9]-", "a date"),
    (r"(?i)\bissues? #?[0-9]+", "an issue number"),
    (
        r"Knowl( ?[0-9]+)?",
        "the paper-summary numbering (name the paper's section instead)",
    ),
    (
        r"(?i)\bnot kept\b|\bwas tried\b",
        "history (what was tried belongs in commit messages)",
    ),
];

/// A word of 7 to 40 hexadecimal digits.
const HEX_WORD: &str = r"\b[0-9a-f]{7,40}\b";

/// The compiled rules.
pub struct Words {
    rules: Vec<(Regex, &'static str)>,
    hex: Regex,
    commit: Regex,
}

impl Default for Words {
    fn default() -> Self {
        Words {
            rules: (WORD_RULES.iter())
                .map(|(p, what)| (Regex::new(p).expect("a valid pattern"), *what))
                .collect(),
            hex: Regex::new(HEX_WORD).expect("a valid pattern"),
            commit: Regex::new(&format!(
                r"(?i)\bcommit(s|ted)?\b[\s:`'(\[]*{HEX_WORD}|{HEX_WORD}[`')\]]*\s+commit\b"
            ))
            .expect("a valid pattern"),
        }
    }
}

/// A bare hexadecimal word that may name a git object: the caller asks git.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HashCandidate {
    /// Where it was.
    pub at: Finding,
    /// The word.
    pub word: String,
}

impl Words {
    /// Checks one line of text (`path:line`), adding findings, and bare hexadecimal words that
    /// may be commit hashes to `candidates`: words of 7 to 40 lowercase hex digits with a digit
    /// and a letter, not written as a constant (`0x...`).
    pub fn check_line(
        &self,
        (path, line): (&Path, usize),
        text: &str,
        findings: &mut Vec<Finding>,
        candidates: &mut BTreeSet<HashCandidate>,
    ) {
        let at = |message: String| Finding {
            path: path.to_path_buf(),
            line,
            message,
        };
        for (re, what) in &self.rules {
            if let Some(m) = re.find(text) {
                findings.push(at(format!("{what}: `{}`", m.as_str())));
            }
        }
        if let Some(m) = self.commit.find(text) {
            findings.push(at(format!("a commit hash: `{}`", m.as_str())));
            return;
        }
        for m in self.hex.find_iter(text) {
            let w = m.as_str();
            let constant = text[..m.start()].ends_with("0x") || text[..m.start()].ends_with('#');
            let mixed = w.bytes().any(|b| b.is_ascii_digit()) && w.bytes().any(|b| b >= b'a');
            if mixed && !constant {
                candidates.insert(HashCandidate {
                    at: at(format!("a commit hash: `{w}`")),
                    word: w.to_string(),
                });
            }
        }
    }
}

/// The candidates that name an object of the git repository at `root` (none when git or the
/// repository is missing).
pub fn git_objects(root: &Path, candidates: &BTreeSet<HashCandidate>) -> Vec<Finding> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let words: BTreeSet<&str> = candidates.iter().map(|c| c.word.as_str()).collect();
    if words.is_empty() {
        return Vec::new();
    }
    let Ok(mut child) = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch-check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return Vec::new();
    };
    let input: String = words.iter().map(|w| format!("{w}\n")).collect();
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let Ok(out) = child.wait_with_output() else {
        return Vec::new();
    };
    if !out.status.success() {
        return Vec::new();
    }
    // One answer per input line, in order: `<sha> <type> <size>`, or `<name> missing`.
    let text = String::from_utf8_lossy(&out.stdout);
    let objects: BTreeSet<&str> = (words.iter().zip(text.lines()))
        .filter(|(_, answer)| !answer.ends_with(" missing") && !answer.ends_with(" ambiguous"))
        .map(|(w, _)| *w)
        .collect();
    (candidates.iter())
        .filter(|c| objects.contains(c.word.as_str()))
        .map(|c| c.at.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> (Vec<String>, Vec<String>) {
        let (mut f, mut c) = (Vec::new(), BTreeSet::new());
        Words::default().check_line((Path::new("x.md"), 3), text, &mut f, &mut c);
        (
            f.into_iter().map(|f| f.message).collect(),
            c.into_iter().map(|c| c.word).collect(),
        )
    }

    #[test]
    fn dates_issue_numbers_and_lab_words_are_found() {
        let bad = [
            ("measured on 2026-12-01", "a date"),
            ("see issue 14", "an issue number"),
            ("Issue #3 says", "an issue number"),
            ("(Knowl 4)", "paper-summary"),
            ("the variant was tried", "history"),
            ("it was not kept", "history"),
            ("at commit 43bebfb", "commit hash"),
            ("commit `43bebfb0` made it", "commit hash"),
        ];
        for (text, what) in bad {
            let (f, _) = check(text);
            assert!(f.len() == 1 && f[0].contains(what), "{text}: {f:?}");
        }
    }

    #[test]
    fn ordinary_words_and_hex_constants_pass() {
        for text in [
            "the seed 0x9e3779b97f4a7c15 and colour #a0b0c0d",
            "tissue 5 layers, the issues of contact",
            "2026 frames, 20-30 ms, a defaced word",
            "commits are small",
        ] {
            let (f, c) = check(text);
            assert!(f.is_empty() && c.is_empty(), "{text}: {f:?} {c:?}");
        }
        // A bare mixed hex word is only a candidate: git decides.
        let (f, c) = check("since 43bebfb the step");
        assert!(f.is_empty() && c == ["43bebfb"], "{f:?} {c:?}");
    }
}
