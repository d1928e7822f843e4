//! Rule (d): no two files of a crate import each other, directly or around a longer loop.
//!
//! An import is a private `use` item, or a path in the code that starts with `crate::`,
//! `super::` or `self::` (also as a string in an attribute, as serde's `with = "crate::m"`). It is an edge to the file that defines the named item, found through
//! the crate's module tree and its re-exports (`pub use`), so `use crate::Name` of a name the
//! crate root re-exports points at the file that defines `Name`. `mod` declarations and
//! re-exports are not imports; neither is anything under `#[cfg(test)]`.

use super::Finding;
use super::shape::is_test;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

/// One name brought in by a `use` item: the path it names and whether it is a glob.
#[derive(Clone, Debug)]
struct Import {
    /// The path, ending in the imported name (or the module of a glob).
    path: Vec<String>,
    /// The name it is known by here (empty for a glob).
    name: String,
    /// `pub`, `pub(crate)`, ...: a re-export, not an import of this file.
    public: bool,
    /// Line of the `use` item.
    line: usize,
}

/// A module: the file it is written in, its children, the names it defines and imports.
#[derive(Default)]
struct Module {
    file: usize,
    parent: Option<usize>,
    /// Directory where its file-module children live.
    dir: PathBuf,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    imports: Vec<Import>,
    /// Paths starting with `crate`, `super` or `self`, with their lines.
    paths: Vec<(Vec<String>, usize)>,
}

/// A crate's module tree.
#[derive(Default)]
pub struct Crate {
    files: Vec<PathBuf>,
    modules: Vec<Module>,
    /// Files that could not be read or parsed.
    pub errors: Vec<Finding>,
}

/// What a path resolves to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Module(usize),
    /// An item (not a module) defined in this module.
    Item(usize),
}

impl Crate {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`), following its
    /// `mod` declarations.
    pub fn load(root: &Path) -> Crate {
        let mut c = Crate::default();
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        c.load_file(root.to_path_buf(), None, dir);
        c
    }

    fn load_file(&mut self, path: PathBuf, parent: Option<usize>, dir: PathBuf) -> Option<usize> {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| syn::parse_file(&text).map_err(|e| e.to_string()));
        let file = match parsed {
            Ok(file) => file,
            Err(e) => {
                self.errors.push(Finding {
                    path: path.clone(),
                    line: 1,
                    message: format!("cannot read the module: {e}"),
                });
                return None;
            }
        };
        self.files.push(path);
        let m = self.new_module(self.files.len() - 1, parent, dir);
        self.load_items(m, &file.items);
        Some(m)
    }

    fn new_module(&mut self, file: usize, parent: Option<usize>, dir: PathBuf) -> usize {
        self.modules.push(Module {
            file,
            parent,
            dir,
            ..Module::default()
        });
        self.modules.len() - 1
    }

    fn load_items(&mut self, m: usize, items: &[syn::Item]) {
        for item in items {
            if let Some(name) = item_name(item) {
                self.modules[m].items.insert(name);
            }
            match item {
                syn::Item::Mod(sub) if !is_test(&sub.attrs) => self.load_mod(m, sub),
                syn::Item::Use(u) if !is_test(&u.attrs) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    let line = u.use_token.span.start().line;
                    let mut out = Vec::new();
                    flatten_use(&u.tree, Vec::new(), &mut out);
                    for (path, name) in out {
                        let i = Import {
                            path,
                            name,
                            public,
                            line,
                        };
                        self.modules[m].imports.push(i);
                    }
                }
                _ => {}
            }
            if !item_is_test(item) && !matches!(item, syn::Item::Mod(_) | syn::Item::Use(_)) {
                let mut v = PathVisitor::default();
                v.visit_item(item);
                self.modules[m].paths.extend(v.paths);
            }
        }
    }

    fn load_mod(&mut self, m: usize, sub: &syn::ItemMod) {
        let name = sub.ident.to_string();
        self.modules[m].items.remove(&name);
        let dir = self.modules[m].dir.clone();
        let child = match &sub.content {
            Some((_, items)) => {
                let file = self.modules[m].file;
                let c = self.new_module(file, Some(m), dir.join(&name));
                self.load_items(c, items);
                Some(c)
            }
            None => {
                let explicit = path_attribute(&sub.attrs).map(|p| dir.join(p));
                let (file, child_dir) = match explicit {
                    Some(p) => (p.clone(), p.parent().unwrap_or(&dir).to_path_buf()),
                    None if dir.join(format!("{name}.rs")).is_file() => {
                        (dir.join(format!("{name}.rs")), dir.join(&name))
                    }
                    None => (dir.join(&name).join("mod.rs"), dir.join(&name)),
                };
                self.load_file(file, Some(m), child_dir)
            }
        };
        if let Some(c) = child {
            self.modules[m].children.insert(name, c);
        }
    }

    /// Resolves `path` as written in module `m` (a `use` path or a path in the code).
    fn resolve(&self, m: usize, path: &[String], depth: usize) -> Option<Target> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let (mut at, rest) = match path[0].as_str() {
            "crate" => (0, &path[1..]),
            "self" => (m, &path[1..]),
            "super" => {
                let mut at = m;
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    at = self.modules[at].parent?;
                    k += 1;
                }
                (at, &path[k..])
            }
            first if self.knows(m, first) => (m, path),
            _ => return None,
        };
        for seg in rest {
            match self.lookup(at, seg, depth)? {
                Target::Module(c) => at = c,
                // A path on from an item (an enum's variant, an associated item) stays in it.
                Target::Item(d) => return Some(Target::Item(d)),
            }
        }
        Some(Target::Module(at))
    }

    /// Whether `name` is defined or imported in module `m`.
    fn knows(&self, m: usize, name: &str) -> bool {
        let md = &self.modules[m];
        md.children.contains_key(name)
            || md.items.contains(name)
            || md.imports.iter().any(|i| i.name == name)
    }

    /// The module or the defining module of the item `name` seen from module `m`.
    fn lookup(&self, m: usize, name: &str, depth: usize) -> Option<Target> {
        let md = &self.modules[m];
        if let Some(&c) = md.children.get(name) {
            return Some(Target::Module(c));
        }
        if md.items.contains(name) {
            return Some(Target::Item(m));
        }
        if let Some(i) = md.imports.iter().find(|i| i.name == name) {
            return self.resolve(m, &i.path, depth + 1);
        }
        for glob in md.imports.iter().filter(|i| i.name.is_empty()) {
            if let Some(Target::Module(g)) = self.resolve(m, &glob.path, depth + 1)
                && g != m
                && let Some(t) = self.lookup(g, name, depth + 1)
            {
                return Some(t);
            }
        }
        None
    }

    fn file_of(&self, t: Target) -> usize {
        match t {
            Target::Module(m) | Target::Item(m) => self.modules[m].file,
        }
    }

    /// Import edges between files: (from, to) -> first line.
    fn edges(&self) -> BTreeMap<(usize, usize), usize> {
        let mut edges: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for (m, md) in self.modules.iter().enumerate() {
            let uses = (md.imports.iter())
                .filter(|i| !i.public)
                .map(|i| (&i.path, i.line));
            let paths = md.paths.iter().map(|(p, l)| (p, *l));
            for (path, line) in uses.chain(paths) {
                if let Some(t) = self.resolve(m, path, 0) {
                    let to = self.file_of(t);
                    if to != md.file {
                        let e = edges.entry((md.file, to)).or_insert(line);
                        *e = (*e).min(line);
                    }
                }
            }
        }
        edges
    }

    /// One finding per loop of files that import each other, at the first import of the loop.
    pub fn cycles(&self, rel: &dyn Fn(&Path) -> PathBuf) -> Vec<Finding> {
        let edges = self.edges();
        let n = self.files.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in edges.keys() {
            next[a].push(b);
        }
        let mut out = Vec::new();
        for scc in strongly_connected(&next) {
            let Some((&(a, b), &line)) = edges
                .iter()
                .find(|((a, b), _)| scc.contains(a) && scc.contains(b))
            else {
                continue;
            };
            let mut lp = vec![a];
            lp.extend(shortest_path(&next, b, a, &scc));
            let name = |f: &usize| rel(&self.files[*f]).display().to_string();
            let names: Vec<String> = lp.iter().map(name).collect();
            let mut message = format!("files import each other: {}", names.join(" -> "));
            if scc.len() + 1 > lp.len() {
                let all: Vec<String> = scc.iter().map(name).collect();
                message.push_str(&format!(
                    " (one loop of {} files tied together: {})",
                    scc.len(),
                    all.join(", ")
                ));
            }
            out.push(Finding {
                path: rel(&self.files[a]),
                line,
                message,
            });
        }
        out
    }
}

/// The name an item defines in its module's namespace, if any.
fn item_name(item: &syn::Item) -> Option<String> {
    use syn::Item::*;
    let ident = match item {
        Const(i) => &i.ident,
        Enum(i) => &i.ident,
        Fn(i) => &i.sig.ident,
        Mod(i) => &i.ident,
        Static(i) => &i.ident,
        Struct(i) => &i.ident,
        Trait(i) => &i.ident,
        TraitAlias(i) => &i.ident,
        Type(i) => &i.ident,
        Union(i) => &i.ident,
        Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

fn item_is_test(item: &syn::Item) -> bool {
    use syn::Item::*;
    match item {
        Fn(i) => is_test(&i.attrs),
        Impl(i) => is_test(&i.attrs),
        Mod(i) => is_test(&i.attrs),
        Const(i) => is_test(&i.attrs),
        Static(i) => is_test(&i.attrs),
        Struct(i) => is_test(&i.attrs),
        _ => false,
    }
}

/// The `#[path = "..."]` of a module.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// The (path, local name) pairs of a use tree; a glob has an empty name.
fn flatten_use(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let with = |s: String| {
        let mut p = prefix.clone();
        p.push(s);
        p
    };
    match tree {
        syn::UseTree::Path(p) => flatten_use(&p.tree, with(p.ident.to_string()), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            if let Some(last) = prefix.last() {
                out.push((prefix.clone(), last.clone()));
            }
        }
        syn::UseTree::Name(n) => out.push((with(n.ident.to_string()), n.ident.to_string())),
        syn::UseTree::Rename(r) => out.push((with(r.ident.to_string()), r.rename.to_string())),
        syn::UseTree::Glob(_) => out.push((prefix, String::new())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), out);
            }
        }
    }
}

/// Collects the paths that start with `crate`, `super` or `self`, outside test items.
#[derive(Default)]
struct PathVisitor {
    paths: Vec<(Vec<String>, usize)>,
}

impl PathVisitor {
    /// Paths written as strings in attributes, as serde's `with = "crate::x::y"` takes them.
    fn string_paths(&mut self, tokens: proc_macro2::TokenStream) {
        for t in tokens {
            match t {
                proc_macro2::TokenTree::Group(g) => self.string_paths(g.stream()),
                proc_macro2::TokenTree::Literal(l) => {
                    let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&l.to_string()) else {
                        continue;
                    };
                    let Ok(path) = syn::parse_str::<syn::Path>(&s.value()) else {
                        continue;
                    };
                    let segs: Vec<String> =
                        path.segments.iter().map(|s| s.ident.to_string()).collect();
                    if segs.len() >= 2 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
                        self.paths.push((segs, l.span().start().line));
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for PathVisitor {
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if let syn::Meta::List(l) = &a.meta {
            self.string_paths(l.tokens.clone());
        }
        visit::visit_attribute(self, a);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() >= 2 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
            let line = p.segments[0].ident.span().start().line;
            self.paths.push((segs, line));
        }
        visit::visit_path(self, p);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            visit::visit_item_fn(self, f);
        }
    }

    /// A `use` inside a function body (those at module level are the module's imports).
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        flatten_use(&u.tree, Vec::new(), &mut out);
        let line = u.use_token.span.start().line;
        for (path, _) in out {
            if path.len() >= 2 && matches!(path[0].as_str(), "crate" | "super" | "self") {
                self.paths.push((path, line));
            }
        }
    }
}

/// Strongly connected components of more than one node (Tarjan), each sorted.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<BTreeSet<usize>> {
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on: Vec<bool>,
        count: usize,
        out: Vec<BTreeSet<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.count);
            self.low[v] = self.count;
            self.count += 1;
            self.stack.push(v);
            self.on[v] = true;
            for &w in &self.next[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(i) if self.on[w] => self.low[v] = self.low[v].min(i),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut scc = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on[w] = false;
                    scc.insert(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    self.out.push(scc);
                }
            }
        }
    }
    let n = next.len();
    let mut t = Tarjan {
        next,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on: vec![false; n],
        count: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
}

/// The nodes of a shortest path from `from` to `to` within `within` (both ends included).
fn shortest_path(
    next: &[Vec<usize>],
    from: usize,
    to: usize,
    within: &BTreeSet<usize>,
) -> Vec<usize> {
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen = BTreeSet::from([from]);
    while let Some(v) = queue.pop_front() {
        if v == to {
            break;
        }
        for &w in &next[v] {
            if within.contains(&w) && seen.insert(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![to];
    let mut at = to;
    while at != from {
        match prev.get(&at) {
            Some(&p) => {
                path.push(p);
                at = p;
            }
            None => break,
        }
    }
    path.reverse();
    path
}
