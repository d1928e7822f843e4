//! Rules (b) and (c): outside tests, benches and examples no function is longer than
//! [`MAX_FN_LINES`] lines (from its `fn` line to its closing brace) unless a comment above it
//! holds [`HOT_KERNEL`] and says why it stays whole, and no `too_many_arguments` lint is
//! allowed (pass a context or settings struct instead).

use super::Finding;
use super::lex::Line;
use std::path::Path;
use syn::visit::{self, Visit};

/// Longest function allowed, in lines.
pub const MAX_FN_LINES: usize = 80;

/// The phrase of the comment that lets a longer function stay whole.
pub const HOT_KERNEL: &str = "hot kernel:";

/// Whether `attrs` hold `#[test]`, or a `cfg` that needs `test` (`cfg(test)`,
/// `cfg(all(test, ...))`; not `cfg(not(test))` or `cfg(any(...))`).
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && matches!(&a.meta, syn::Meta::List(l) if needs_test(&l.tokens.to_string())))
    })
}

/// Whether the predicate of a `cfg` (its tokens as text) holds only when testing.
fn needs_test(predicate: &str) -> bool {
    let p: String = predicate.chars().filter(|c| !c.is_whitespace()).collect();
    p == "test" || p.starts_with("all(test,") || (p.starts_with("all(") && p.contains(",test"))
}

/// Checks one parsed file; `lines` are its lexed lines (for the comments above a function).
pub fn check_file(path: &Path, file: &syn::File, lines: &[Line], findings: &mut Vec<Finding>) {
    let mut v = ShapeVisitor {
        path,
        lines,
        findings,
    };
    v.visit_file(file);
}

struct ShapeVisitor<'a> {
    path: &'a Path,
    lines: &'a [Line],
    findings: &'a mut Vec<Finding>,
}

impl ShapeVisitor<'_> {
    fn finding(&mut self, line: usize, message: String) {
        self.findings.push(Finding {
            path: self.path.to_path_buf(),
            line,
            message,
        });
    }

    /// Whether a comment in the attributes and comment lines right above `first` (1-based)
    /// holds [`HOT_KERNEL`].
    fn hot_kernel(&self, first: usize) -> bool {
        let mut k = first;
        while k >= 2 {
            let above = &self.lines[k - 2];
            let code = above.code.trim();
            let part_of_header = code.is_empty() && !above.comment.is_empty()
                || code.starts_with("#[")
                || code.starts_with(')')
                || code.starts_with(']');
            if !part_of_header {
                break;
            }
            k -= 1;
        }
        (k..=first).any(|l| self.lines[l - 1].comment.contains(HOT_KERNEL))
    }

    fn check_fn(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().start().line;
        let length = end + 1 - start;
        let first = (attrs.iter())
            .map(|a| a.pound_token.span.start().line)
            .chain([start])
            .min()
            .unwrap_or(start);
        if length > MAX_FN_LINES && !self.hot_kernel(first) {
            self.finding(
                start,
                format!(
                    "fn `{}` is {length} lines (at most {MAX_FN_LINES}, or a `// {HOT_KERNEL} why` comment above it)",
                    sig.ident
                ),
            );
        }
    }
}

impl<'ast> Visit<'ast> for ShapeVisitor<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test(&i.attrs) {
            visit::visit_item_impl(self, i);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.check_fn(&f.attrs, &f.sig, &f.block);
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.check_fn(&f.attrs, &f.sig, &f.block);
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.check_fn(&f.attrs, &f.sig, block);
        }
        visit::visit_trait_item_fn(self, f);
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        let lint = a.path().is_ident("allow") || a.path().is_ident("expect");
        if let (true, syn::Meta::List(l)) = (lint, &a.meta)
            && l.tokens.to_string().contains("too_many_arguments")
        {
            let line = a.pound_token.span.start().line;
            self.finding(
                line,
                "`too_many_arguments` allowed: pass a context or settings struct instead".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(src: &str) -> Vec<String> {
        let file = syn::parse_file(src).expect("valid Rust");
        let lines = super::super::lex::lines(src);
        let mut f = Vec::new();
        check_file(Path::new("a.rs"), &file, &lines, &mut f);
        f.into_iter()
            .map(|f| format!("{}: {}", f.line, f.message))
            .collect()
    }

    fn long_fn(name: &str, body_lines: usize) -> String {
        let body: String = (0..body_lines)
            .map(|i| format!("    let _x{i} = {i};\n"))
            .collect();
        format!("fn {name}() {{\n{body}}}\n")
    }

    #[test]
    fn a_function_of_81_lines_is_found_and_one_of_80_is_not() {
        assert!(findings(&long_fn("short", 78)).is_empty());
        let f = findings(&format!("\n{}", long_fn("long", 79)));
        assert_eq!(
            f,
            ["2: fn `long` is 81 lines (at most 80, or a `// hot kernel: why` comment above it)"]
        );
        // In an impl and a trait's default body too.
        let imp = format!("struct S;\nimpl S {{\n{}}}\n", long_fn("m", 90));
        assert_eq!(findings(&imp).len(), 1);
    }

    #[test]
    fn a_hot_kernel_comment_above_keeps_a_long_function_whole() {
        let src = format!(
            "// hot kernel: one pass over the pairs, split it and the loop state is shared\n\
             /// Docs.\n#[inline]\n{}",
            long_fn("kernel", 100)
        );
        assert!(findings(&src).is_empty());
        let far = format!(
            "// hot kernel: too far away\n\nfn other() {{}}\n{}",
            long_fn("k", 100)
        );
        assert_eq!(findings(&far).len(), 1);
    }

    #[test]
    fn only_cfgs_that_need_test_mark_test_code() {
        assert!(needs_test("test") && needs_test("all(test, unix)"));
        assert!(needs_test("all(unix, test)"));
        assert!(!needs_test("not(test)") && !needs_test("any(test, feature = \"x\")"));
        let src = format!("#[cfg(not(test))]\n{}", long_fn("shipped", 100));
        assert_eq!(findings(&src).len(), 1);
    }

    #[test]
    fn tests_are_not_counted() {
        let src = format!(
            "#[cfg(test)]\nmod tests {{\n{}}}\n#[test]\n{}",
            long_fn("in_mod", 100),
            long_fn("a_test", 100)
        );
        assert!(findings(&src).is_empty());
    }

    #[test]
    fn too_many_arguments_allowances_are_found() {
        let src = "#![allow(clippy::too_many_arguments)]\n\
                   #[allow(dead_code, clippy::too_many_arguments)]\nfn f() {}\n\
                   #[expect(clippy::too_many_arguments)]\nfn g() {}\n\
                   #[allow(dead_code)]\nfn h() {}\n\
                   #[cfg(test)]\nmod t {\n#[allow(clippy::too_many_arguments)]\nfn x() {}\n}\n";
        let f = findings(src);
        let lines: Vec<&str> = f.iter().map(|l| l.split(':').next().unwrap()).collect();
        assert_eq!(lines, ["1", "2", "4"], "{f:?}");
    }
}
