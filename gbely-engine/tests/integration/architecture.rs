//! ARCHITECTURE.md stays true: every file and folder it names exists, and the engine's modules
//! depend on each other one way (no circle between sibling modules, at any level).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

/// The places a path in ARCHITECTURE.md may be relative to: the root, each crate, each crate's
/// `src/` and `tests/` (the codemap names files inside the crate it describes).
fn bases(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    for krate in ["gbely-rules", "gbely-world", "gbely-council", "gbely-engine", "gbely-py", "agents"] {
        for sub in ["", "src", "tests", "python"] {
            out.push(root.join(krate).join(sub));
        }
    }
    out
}

/// The names of every file and folder of the repository (build output and hidden folders left out).
fn repo_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if entry.path().is_dir() {
                stack.push(entry.path());
            }
            out.insert(name);
        }
    }
    out
}

/// The paths a Markdown text names: relative link targets, and code spans that look like a
/// path (a `/` or a file extension, no placeholders or wildcards).
fn named_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let looks_like_path = |s: &str| {
        let ext = [".rs", ".md", ".py", ".toml", ".html", ".pyi", ".txt"].iter().any(|e| s.ends_with(e));
        (s.contains('/') || ext)
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
            && !s.starts_with('/')
            && !s.contains("//")
            && !s.starts_with("127.")
    };
    for (k, part) in text.split('`').enumerate() {
        if k % 2 == 1 && looks_like_path(part) {
            out.insert(part.trim_end_matches('/').to_string());
        }
    }
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let target = &rest[..rest.find(')').unwrap_or(0)];
        let target = target.split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") {
            out.insert(target.trim_end_matches('/').to_string());
        }
    }
    out
}

/// Every path `doc` (relative to the root) names exists, relative to the root, a crate, or the
/// document's own folder; it must name at least `at_least` of them (a codemap names files).
fn check_paths(doc: &str, at_least: usize) {
    let root = repo();
    let path = root.join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let paths = named_paths(&text);
    assert!(paths.len() >= at_least, "{doc} names files: found only {paths:?}");
    let mut bases = bases(&root);
    bases.push(path.parent().expect("a folder").to_path_buf());
    // A bare file name may be anywhere in the repository; a path is relative to a base.
    let files = repo_files(&root);
    let exists = |p: &String| {
        if p.contains('/') {
            bases.iter().any(|b| b.join(p).exists())
        } else {
            files.contains(p.as_str())
        }
    };
    let missing: Vec<&String> = paths.iter().filter(|p| !exists(p)).collect();
    assert!(missing.is_empty(), "{doc} names paths that do not exist: {missing:?}");
}

#[test]
fn every_path_architecture_md_names_exists() {
    check_paths("ARCHITECTURE.md", 40);
}

#[test]
fn every_path_the_testing_page_names_exists() {
    check_paths("docs/testing.md", 20);
}

#[test]
fn the_path_finder_sees_code_spans_and_links_but_not_commands() {
    let found = named_paths("see `src/sim/` and [rules](docs/rules.md#12) or `cargo test`, `a.py`, `gbely-runs/…/x`");
    let want: BTreeSet<String> = ["src/sim", "docs/rules.md", "a.py"].map(String::from).into();
    assert_eq!(found, want);
}

/// A module path of the engine: the names from the crate root (`["app", "league"]`).
type Module = Vec<String>;

/// Every source file of `src` as its module path.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("inside src").with_extension("");
            let mut module: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if module == ["lib"] || module == ["main"] {
                module.clear();
            }
            out.insert(module, path);
        }
    }
    out
}

/// The modules a file's code names (`crate::…`, `super::…`), tests left out.
fn uses(module: &Module, text: &str, all: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let resolve = |path: &[&str]| -> Option<Module> {
        let mut base: Module = match *path.first()? {
            "crate" => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => return None,
        };
        let mut rest = &path[1..];
        while rest.first() == Some(&"super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().map(|s| s.to_string()));
        (1..=base.len()).rev().map(|k| base[..k].to_vec()).find(|m| all.contains_key(m))
    };
    let mut out = BTreeSet::new();
    let words: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < words.len() {
        let at_word = i == 0 || !(words[i - 1].is_alphanumeric() || words[i - 1] == '_');
        let rest: String = words[i..words.len().min(i + 7)].iter().collect();
        if at_word && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            // The path, and each item of a `{…}` group that follows it.
            let mut j = i;
            while j < words.len() && (words[j].is_alphanumeric() || words[j] == '_' || words[j] == ':') {
                j += 1;
            }
            let path: String = words[i..j].iter().collect();
            let parts: Vec<&str> = path.trim_end_matches(':').split("::").collect();
            out.extend(resolve(&parts));
            if words.get(j) == Some(&'{') {
                let end = (j..words.len()).find(|&k| words[k] == '}').unwrap_or(words.len());
                let group: String = words[j + 1..end].iter().collect();
                for item in group.split(',') {
                    let item = item.trim().split(" as ").next().unwrap_or_default();
                    let mut full = parts.clone();
                    full.extend(item.split("::").filter(|s| !s.is_empty()));
                    out.extend(resolve(&full));
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out.retain(|m| !module.starts_with(m) && m != module);
    out
}

/// Each edge between two modules, lifted to the two siblings under their common parent.
fn sibling_edges(edges: &BTreeSet<(Module, Module)>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (a, b) in edges {
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        if common < a.len() && common < b.len() {
            g.entry(a[..=common].to_vec()).or_default().insert(b[..=common].to_vec());
        }
    }
    g
}

/// A circle in a graph, if there is one.
fn circle(g: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        v: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, bool>,
        path: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        match state.get(v) {
            Some(true) => return None,
            Some(false) => {
                let from = path.iter().position(|m| m == v).unwrap_or(0);
                return Some(path[from..].to_vec());
            }
            None => {}
        }
        state.insert(v.clone(), false);
        path.push(v.clone());
        for w in g.get(v).into_iter().flatten() {
            if let Some(c) = visit(w, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(v.clone(), true);
        None
    }
    let mut state = BTreeMap::new();
    g.keys().find_map(|v| visit(v, g, &mut state, &mut Vec::new()))
}

#[test]
fn the_engines_modules_depend_on_each_other_one_way() {
    let src = repo().join("gbely-engine/src");
    let all = modules(&src);
    let mut edges = BTreeSet::new();
    for (module, path) in &all {
        let text = std::fs::read_to_string(path).expect("a source file");
        for used in uses(module, &text, &all) {
            edges.insert((module.clone(), used));
        }
    }
    assert!(edges.len() > 50, "the engine's modules use each other: found {edges:?}");
    let g = sibling_edges(&edges);
    let shown = |c: &[Module]| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" → ");
    assert!(circle(&g).is_none(), "a circle of modules: {}", shown(&circle(&g).unwrap_or_default()));
}

#[test]
fn the_circle_finder_finds_a_planted_circle() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Module>();
    let all: BTreeMap<Module, PathBuf> =
        ["game", "session", "app", "app::league", "app::remote"].map(|s| (m(s), PathBuf::new())).into();
    assert_eq!(uses(&m("game"), "use crate::session::{Session, X};", &all), [m("session")].into());
    assert_eq!(uses(&m("app::league"), "use super::remote::play; // crate::game", &all), [m("app::remote")].into());
    let planted: BTreeSet<(Module, Module)> =
        [(m("app::league"), m("app::remote")), (m("app::remote"), m("app::league"))].into();
    assert!(circle(&sibling_edges(&planted)).is_some());
    let one_way: BTreeSet<(Module, Module)> = [(m("app::league"), m("game")), (m("game"), m("session"))].into();
    assert!(circle(&sibling_edges(&one_way)).is_none());
}
