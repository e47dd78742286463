//! The similarity review of the organisers' code review (rules §8): how alike two participants'
//! last uploads are, as code and as play. Pure functions, no IO: the pages read the files and
//! replays and hand them here.
//!
//! **Code**, as MOSS and JPlag measure it. A Python source is cut into tokens by Python's own
//! lexical rules (names, keywords, numbers, strings, operators; comments dropped, and docstrings:
//! a logical line that is only a string), then normalised: a keyword or a builtin stays itself,
//! every other name becomes `N` and every literal its kind (`STR`, `NUM`), so renaming changes
//! nothing. Every run of [`K`] tokens is hashed, and winnowing (Schleimer, Wilkerson and Aiken,
//! *Winnowing: local algorithms for document fingerprinting*, SIGMOD 2003: MOSS's algorithm) keeps
//! the smallest hash of each [`WINDOW`] consecutive ones: any match of at least `K + WINDOW - 1`
//! tokens shares a fingerprint, none of fewer than `K` does. A file is its *set* of
//! fingerprints, so reordering its functions changes only the few that straddle a boundary.
//! The score is the shared fingerprints over the smaller set (MOSS's and JPlag's "max"
//! figure): a file copied whole into a larger one scores 1.
//!
//! **Behaviour**: each leaderboard match is the same map against the same deterministic Council,
//! so two agents see the same observation in a round exactly as long as they have played alike.
//! The score is the share of rounds in which both agents, in identical observations, gave
//! identical commands, over the rounds the longer-lived agent played.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use gbely_world::replay::Answer;
use gbely_world::Replay;
use sha2::{Digest, Sha256};

/// Tokens per hashed run (JPlag's default minimum match for Python is 12 tokens).
pub const K: usize = 12;
/// Hashes per winnowing window: a match of `K + WINDOW - 1` = 19 tokens (about two lines of
/// Python) is always found.
pub const WINDOW: usize = 8;
/// A pair of files whose code score reaches this is flagged for the review. Agents written apart
/// share only short protocol idioms (the template against the example expander: 0.06), a renamed
/// and reordered copy keeps nearly every fingerprint (0.97, see the tests); between the two lie
/// agents grown from the same template, which the organisers judge by looking.
pub const CODE_FLAG: f64 = 0.6;
/// A pair of agents whose behaviour score reaches this is flagged: they played the same first
/// half of the match command for command, which independent agents do not (a deterministic
/// agent's copy plays the whole match alike, 1.0).
pub const BEHAVIOUR_FLAG: f64 = 0.5;

// ---------------------------------------------------------------------------------------------
// Code

/// A normalised token and the line (from 1) where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub line: u32,
}

/// Python's keywords (`keyword.kwlist`; the soft keywords `match`, `case`, `type` and `_` are
/// names, as they are to the tokenizer).
#[rustfmt::skip]
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Python's builtin functions and types: kept, since calling `sorted` is not calling `N`.
#[rustfmt::skip]
const BUILTINS: [&str; 69] = [
    "abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable",
    "chr", "classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec",
    "filter", "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input",
    "int", "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview", "min", "next",
    "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set",
    "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars",
];

/// Operators and delimiters, longest first (Python's `token.EXACT_TOKEN_TYPES`).
#[rustfmt::skip]
const OPERATORS: [&str; 47] = [
    "**=", "//=", ">>=", "<<=", "...", "!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=", ":=", "<<",
    "<=", "==", ">=", ">>", "@=", "^=", "|=", "!", "%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";", "<",
    "=", ">", "@", "[", "]", "^", "{", "|", "}",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Name,
    Number,
    Str,
    Op,
}

/// Python's tokens of `source`, normalised (see the module's documentation), with the end of
/// each logical line as a token `NL`. Never fails: what Python would refuse (a stray `$`, an
/// unterminated string) is skipped or ends at the line's end, as a reviewer reads it.
pub fn tokens(source: &str) -> Vec<Token> {
    let b = source.as_bytes();
    let mut out = Vec::new();
    // The current logical line's tokens, and the bracket depth (newlines inside brackets do not
    // end a logical line).
    let mut line_tokens: Vec<(Kind, Token)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1u32;
    let mut i = 0;
    let end_line = |line_tokens: &mut Vec<(Kind, Token)>, out: &mut Vec<Token>, line: u32| {
        // A logical line that is only a string (or adjacent strings) is a docstring or a no-op.
        if !line_tokens.is_empty() && !line_tokens.iter().all(|(k, _)| *k == Kind::Str) {
            out.extend(line_tokens.drain(..).map(|(_, t)| t));
            out.push(Token { text: "NL".into(), line });
        }
        line_tokens.clear();
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                if depth == 0 {
                    end_line(&mut line_tokens, &mut out, line);
                }
                line += 1;
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' if b.get(i + 1) == Some(&b'\n') => {
                line += 1;
                i += 2;
            }
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => {
                line += 1;
                i += 3;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'\'' | b'"' => {
                let start = line;
                i = skip_string(b, i, &mut line);
                line_tokens.push((Kind::Str, Token { text: "STR".into(), line: start }));
            }
            c if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) => {
                i = skip_number(b, i);
                line_tokens.push((Kind::Number, Token { text: "NUM".into(), line }));
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric() || b[i] >= 0x80) {
                    i += 1;
                }
                let word = &source[start..i];
                let prefix = word.len() <= 2 && word.bytes().all(|c| b"rRbBuUfF".contains(&c));
                if prefix && matches!(b.get(i), Some(b'\'' | b'"')) {
                    let first = line;
                    i = skip_string(b, i, &mut line);
                    line_tokens.push((Kind::Str, Token { text: "STR".into(), line: first }));
                } else {
                    let text = if KEYWORDS.contains(&word) || BUILTINS.contains(&word) { word } else { "N" };
                    line_tokens.push((Kind::Name, Token { text: text.into(), line }));
                }
            }
            _ => {
                let rest = &b[i..];
                match OPERATORS.iter().find(|op| rest.starts_with(op.as_bytes())) {
                    Some(op) => {
                        match *op {
                            "(" | "[" | "{" => depth += 1,
                            ")" | "]" | "}" => depth = depth.saturating_sub(1),
                            _ => {}
                        }
                        line_tokens.push((Kind::Op, Token { text: (*op).into(), line }));
                        i += op.len();
                    }
                    None => i += 1, // Not Python (`$`, `?`, a stray backslash): skipped.
                }
            }
        }
    }
    end_line(&mut line_tokens, &mut out, line);
    out
}

/// The index after the string literal whose quote is at `i`, counting its newlines.
fn skip_string(b: &[u8], mut i: usize, line: &mut u32) -> usize {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    i += if triple { 3 } else { 1 };
    while i < b.len() {
        match b[i] {
            // Even in a raw string a backslash keeps the next quote in the string.
            b'\\' => {
                if b.get(i + 1) == Some(&b'\n') {
                    *line += 1;
                }
                i += 2;
            }
            b'\n' if !triple => return i, // Unterminated: the line's end ends it.
            b'\n' => {
                *line += 1;
                i += 1;
            }
            c if c == q && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q))) => {
                return i + if triple { 3 } else { 1 };
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// The index after the number starting at `i` (decimal, hexadecimal, octal, binary, with `_`,
/// a fraction, an exponent, `j`).
fn skip_number(b: &[u8], mut i: usize) -> usize {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    if at(i) == b'0' && matches!(at(i + 1), b'x' | b'X' | b'o' | b'O' | b'b' | b'B') {
        i += 2;
        while at(i).is_ascii_hexdigit() || at(i) == b'_' {
            i += 1;
        }
        return i;
    }
    while at(i).is_ascii_digit() || at(i) == b'_' || at(i) == b'.' {
        i += 1;
    }
    if matches!(at(i), b'e' | b'E')
        && (at(i + 1).is_ascii_digit() || (matches!(at(i + 1), b'+' | b'-') && at(i + 2).is_ascii_digit()))
    {
        i += 2;
        while at(i).is_ascii_digit() || at(i) == b'_' {
            i += 1;
        }
    }
    if matches!(at(i), b'j' | b'J') {
        i += 1;
    }
    i
}

/// One fingerprint: a winnowed hash and the lines its tokens span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Print {
    pub hash: u64,
    pub first_line: u32,
    pub last_line: u32,
}

/// A source's fingerprints (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub struct Fingerprints {
    /// In the order they were selected, with where they lie.
    pub prints: Vec<Print>,
    /// The distinct hashes.
    set: HashSet<u64>,
}

impl Fingerprints {
    /// The fingerprints of a Python source.
    pub fn of(source: &str) -> Fingerprints {
        let toks = tokens(source);
        let hashes: Vec<u64> = toks.iter().map(|t| fnv(t.text.as_bytes())).collect();
        // A source shorter than one run is one fingerprint of all of it.
        let k = K.min(hashes.len());
        if k == 0 {
            return Fingerprints::default();
        }
        let grams: Vec<u64> =
            hashes.windows(k).map(|w| w.iter().fold(0xcbf2_9ce4_8422_2325, |h, t| mix(h, *t))).collect();
        let mut prints: Vec<Print> = Vec::new();
        let mut last: Option<usize> = None;
        let w = WINDOW.min(grams.len());
        for start in 0..=grams.len() - w {
            // The smallest hash of the window, the rightmost on a tie (robust winnowing: a run of
            // equal hashes, as repetitive code makes, gives one fingerprint, not one a window).
            let (pos, _) = (start..start + w)
                .map(|p| (p, grams[p]))
                .min_by_key(|&(p, h)| (h, std::cmp::Reverse(p)))
                .expect("w ≥ 1");
            if last != Some(pos) {
                last = Some(pos);
                prints.push(Print { hash: grams[pos], first_line: toks[pos].line, last_line: toks[pos + k - 1].line });
            }
        }
        let set = prints.iter().map(|p| p.hash).collect();
        Fingerprints { prints, set }
    }

    /// These fingerprints without those of `base` (MOSS's base file: code every participant
    /// was given, such as the template, is no evidence of copying).
    pub fn without(mut self, base: &Fingerprints) -> Fingerprints {
        self.prints.retain(|p| !base.set.contains(&p.hash));
        self.set.retain(|h| !base.set.contains(h));
        self
    }

    /// How many distinct fingerprints.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The lines of this source covered by a fingerprint that `other` has too.
    pub fn shared_lines(&self, other: &Fingerprints) -> BTreeSet<u32> {
        self.prints.iter().filter(|p| other.set.contains(&p.hash)).flat_map(|p| p.first_line..=p.last_line).collect()
    }
}

/// FNV-1a: a token's hash, the same on every machine and run (the standard library's is seeded).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn mix(h: u64, t: u64) -> u64 {
    (h ^ t).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29)
}

/// Code similarity: the distinct fingerprints two sources share over the smaller set's size,
/// 0 to 1 (0 when either has none).
pub fn code_similarity(a: &Fingerprints, b: &Fingerprints) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0.0;
    }
    let shared = small.set.iter().filter(|h| large.set.contains(h)).count();
    shared as f64 / small.len() as f64
}

// ---------------------------------------------------------------------------------------------
// Behaviour

/// What one seat saw and did in each round of a match: per round it was in the game, a hash of
/// its observation and of its commands (`None`: a violation, no commands).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behaviour {
    /// The map's fingerprint: matches on different maps are not compared.
    pub map: String,
    pub rounds: Vec<(u32, u64, Option<u64>)>,
}

impl Behaviour {
    /// The behaviour of `seat` in a replay, by re-simulating it (the observations are not in the
    /// file). Refused as the replay readers refuse: a broken file, one over their budget.
    pub fn of(replay: &Replay, seat: u8) -> Result<Behaviour, String> {
        let map = Arc::new(replay.check().map_err(|e| e.to_string())?);
        gbely_engine::replays::within_budget(replay, &map, gbely_engine::replays::Work::Resimulate)?;
        let grid = map.grid().clone();
        let mut rounds = Vec::new();
        gbely_engine::replays::resimulate_observing(
            replay,
            Arc::clone(&map),
            |s| s == seat,
            |r, _, obs, regenerated| {
                let seen = hash(gbely_engine::wire::observation_json(obs, &grid).as_bytes());
                let commands = match regenerated {
                    Some(c) => Some(c.iter().map(|c| gbely_engine::wire::command_to_value(c, &grid)).collect()),
                    None => replay.turns[r]
                        .answers
                        .get(seat as usize)
                        .and_then(|a| gbely_engine::replays::answer_commands(a, &grid))
                        .filter(|_| !matches!(replay.turns[r].answers[seat as usize], Answer::Violation(_))),
                };
                let did =
                    commands.map(|c: Vec<serde_json::Value>| hash(serde_json::Value::Array(c).to_string().as_bytes()));
                rounds.push((r as u32, seen, did));
            },
            |_, _, _| true,
        );
        Ok(Behaviour { map: replay.map.fingerprint.clone(), rounds })
    }
}

fn hash(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(Sha256::digest(bytes)[..8].try_into().expect("8 bytes"))
}

/// Behaviour similarity: the share of rounds in which both agents, seeing the same observation,
/// gave the same commands, over the rounds the longer-lived of them played; `None` when the
/// matches were on different maps or neither agent played a round.
pub fn behaviour_similarity(a: &Behaviour, b: &Behaviour) -> Option<f64> {
    let played = a.rounds.len().max(b.rounds.len());
    if a.map != b.map || played == 0 {
        return None;
    }
    let mut theirs = b.rounds.iter().peekable();
    let mut alike = 0;
    for (round, seen, did) in &a.rounds {
        while theirs.next_if(|(r, _, _)| r < round).is_some() {}
        if let Some((_, seen_b, did_b)) = theirs.next_if(|(r, _, _)| r == round) {
            if seen == seen_b && did.is_some() && did == did_b {
                alike += 1;
            }
        }
    }
    Some(f64::from(alike) / played as f64)
}

// ---------------------------------------------------------------------------------------------
// The review

/// What the review knows of one upload: its code's fingerprints and, once judged, its play.
#[derive(Clone, Debug)]
pub struct Profile {
    pub code: Fingerprints,
    pub behaviour: Option<Behaviour>,
}

/// Two uploads (indices into the profiles) and how alike they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub code: f64,
    /// `None`: one of them has no judged match, or they were played on different maps.
    pub behaviour: Option<f64>,
}

/// Every pair of `profiles`, ranked twice: by code similarity, and by behaviour (pairs without
/// a behaviour score left out), the most alike first, ties in the profiles' order; at most `top`
/// of each.
pub fn ranked_pairs<P: std::borrow::Borrow<Profile>>(profiles: &[P], top: usize) -> (Vec<Pair>, Vec<Pair>) {
    let mut all = Vec::new();
    for a in 0..profiles.len() {
        for b in a + 1..profiles.len() {
            let (pa, pb) = (profiles[a].borrow(), profiles[b].borrow());
            let behaviour = match (&pa.behaviour, &pb.behaviour) {
                (Some(x), Some(y)) => behaviour_similarity(x, y),
                _ => None,
            };
            all.push(Pair { a, b, code: code_similarity(&pa.code, &pb.code), behaviour });
        }
    }
    let mut by_code = all.clone();
    by_code.sort_by(|x, y| y.code.total_cmp(&x.code).then((x.a, x.b).cmp(&(y.a, y.b))));
    by_code.truncate(top);
    let mut by_behaviour: Vec<Pair> = all.into_iter().filter(|p| p.behaviour.is_some()).collect();
    by_behaviour.sort_by(|x, y| {
        let key = |p: &Pair| p.behaviour.unwrap_or_default();
        key(y).total_cmp(&key(x)).then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    by_behaviour.truncate(top);
    (by_code, by_behaviour)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = include_str!("../../agents/my_agent.py");
    const EXPANDER: &str = include_str!("../../agents/expander.py");

    fn normalised(src: &str) -> Vec<String> {
        tokens(src).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn tokens_follow_pythons_rules_and_forget_names_literals_comments_and_docstrings() {
        let src = "def f(x, y=2.5e-3):\n    \"\"\"Doc\n    string.\"\"\"\n    # a comment\n    \
                   return len(x) + y ** 0x1F  # trailing\ns = rb'a\\'b' f\"{x}\" 'c'\n";
        assert_eq!(
            normalised(src),
            [
                "def", "N", "(", "N", ",", "N", "=", "NUM", ")", ":", "NL", "return", "len", "(", "N", ")", "+", "N",
                "**", "NUM", "NL", "N", "=", "STR", "STR", "STR", "NL"
            ]
        );
        // Lines: the docstring's two lines and the comment are counted.
        let lines: Vec<u32> = tokens(src).iter().filter(|t| t.text == "return").map(|t| t.line).collect();
        assert_eq!(lines, [5]);
    }

    #[test]
    fn brackets_and_backslashes_continue_a_logical_line() {
        assert_eq!(
            normalised("a = [1,\n 2]\nb = 1 + \\\n 2\n"),
            ["N", "=", "[", "NUM", ",", "NUM", "]", "NL", "N", "=", "NUM", "+", "NUM", "NL"]
        );
    }

    #[test]
    fn what_python_refuses_is_read_without_panicking() {
        for src in ["'unterminated\nx = 1", "\"\"\"never closed", "x = $ ? \\", "0x", "1e", "é = 'ü'", "\\\r\n", ""] {
            let _ = Fingerprints::of(src);
        }
        assert_eq!(normalised("'unterminated\nx = 1"), ["N", "=", "NUM", "NL"]);
    }

    /// `src` with the identifier `from` (a whole word, wherever it is) renamed `to`.
    fn rename(src: &str, from: &str, to: &str) -> String {
        let word = |c: Option<char>| c.is_some_and(|c| c == '_' || c.is_alphanumeric());
        let mut out = String::new();
        let mut rest = src;
        while let Some(k) = rest.find(from) {
            let (before, after) = (rest[..k].chars().next_back(), rest[k + from.len()..].chars().next());
            out += &rest[..k];
            out += if word(before) || word(after) { from } else { to };
            rest = &rest[k + from.len()..];
        }
        out + rest
    }

    /// The expander, disguised: its two functions swapped, its imports reordered, its module
    /// docstring and comments rewritten, then every name of its own renamed.
    fn disguised_expander() -> String {
        let (helper_at, decide_at) =
            (EXPANDER.find("def potrebna_sila").unwrap(), EXPANDER.find("def decide").unwrap());
        let (helper, decide) = (&EXPANDER[helper_at..decide_at], &EXPANDER[decide_at..]);
        let body: String = format!("{decide}\n\n{helper}")
            .lines()
            .map(|l| match l.find("  #") {
                Some(k) => format!("{}  # my own comment\n", &l[..k]),
                None if l.trim_start().starts_with('#') => "    # see below\n".to_string(),
                None => format!("{l}\n"),
            })
            .collect();
        let mut src = format!(
            "\"\"\"My very own agent, written from scratch.\"\"\"\nfrom collections import deque\nimport pravidla\nimport math\n\n\n{body}"
        );
        for (from, to) in [
            ("potrebna_sila", "force_needed"),
            ("utocnici", "attackers"),
            ("cudzie", "foreign"),
            ("spare", "reserve"),
            ("front", "edge"),
            ("ciele", "targets"),
            ("poznamky", "notes"),
            ("prikazy", "orders"),
            ("priorita", "prio"),
            ("need", "req"),
            ("value", "worth"),
            ("okolo", "around"),
            ("chyba", "missing"),
            ("posli", "send"),
            ("dist", "distance"),
            ("fronta", "queue"),
            ("index", "where"),
            ("moje", "mine"),
            ("pole", "cell"),
            ("stav", "obs"),
        ] {
            src = rename(&src, from, to);
        }
        src
    }

    #[test]
    fn a_renamed_and_reordered_copy_is_found() {
        let copy = disguised_expander();
        assert!(copy.contains("def force_needed") && copy.find("def decide") < copy.find("def force_needed"));
        assert!(!copy.contains("utocnici"));
        let score = code_similarity(&Fingerprints::of(EXPANDER), &Fingerprints::of(&copy));
        // The bodies are token for token the same after normalisation; only the runs that straddle
        // the moved function's edges and the imports (at most K + WINDOW − 1 tokens each side of
        // three edges, of about 700 tokens) can differ.
        assert!(score >= 0.8, "{score}");
        assert!(score >= CODE_FLAG);
        // Renaming alone changes nothing.
        let renamed = EXPANDER.replace("potrebna_sila", "f").replace("moje", "m");
        assert_eq!(code_similarity(&Fingerprints::of(EXPANDER), &Fingerprints::of(&renamed)), 1.0);
    }

    #[test]
    fn two_different_agents_are_not_found() {
        let score = code_similarity(&Fingerprints::of(TEMPLATE), &Fingerprints::of(EXPANDER));
        assert!(score < CODE_FLAG / 2.0, "{score}");
        // Nor is anything found between a file and an empty one.
        assert_eq!(code_similarity(&Fingerprints::of(TEMPLATE), &Fingerprints::of("")), 0.0);
    }

    #[test]
    fn a_file_is_wholly_like_itself_and_the_shared_lines_cover_a_copied_function() {
        let fp = Fingerprints::of(EXPANDER);
        assert_eq!(code_similarity(&fp, &fp), 1.0);
        // A new file made of the template's `obrana` (lines 16–18) and something else.
        let obrana = TEMPLATE.lines().skip(15).take(3).collect::<Vec<_>>().join("\n");
        let other = format!("import pravidla\n\n\n{obrana}\n\n\nwhile True:\n    pass\n");
        let lines = Fingerprints::of(TEMPLATE).shared_lines(&Fingerprints::of(&other));
        assert!(lines.contains(&17), "{lines:?}");
        assert!(!lines.iter().any(|l| *l > 30), "{lines:?}");
    }

    /// A 60-round match on a small generated map of `agent` (seat 0, its answers recorded) against
    /// the Council (seat 1, regenerated on reading), as the judge plays a leaderboard match.
    fn replay_of(mut agent: impl FnMut(&gbely_rules::Observation) -> Vec<gbely_rules::Command>) -> Replay {
        use gbely_engine::{MatchConfig, PlayerAnswer, Session};
        let map = Arc::new(gbely_world::generate_duel("similarity", 16, 16).expect("a map"));
        let mut session = Session::new(map, MatchConfig { rounds: 60 }, vec!["agent".into(), "council".into()]);
        session.set_builtin(1, Some("council"));
        session.record();
        let mut council = gbely_engine::builtins::builtin_agent("council").expect("the Council");
        while !session.is_over() {
            for seat in 0..2u8 {
                if session.is_active(seat) {
                    let obs = session.observe(seat);
                    let commands = if seat == 0 { agent(&obs) } else { council.decide(&obs) };
                    session.submit(seat, PlayerAnswer::Commands(commands));
                }
            }
            session.advance();
        }
        session.finish().replay.expect("recorded")
    }

    fn builtin(name: &str) -> impl FnMut(&gbely_rules::Observation) -> Vec<gbely_rules::Command> {
        let mut agent = gbely_engine::builtins::builtin_agent(name).expect("a built-in agent");
        move |obs| agent.decide(obs)
    }

    #[test]
    fn behaviour_finds_a_copy_a_partial_copy_and_not_a_different_agent() {
        let template = Behaviour::of(&replay_of(builtin("template-rs")), 0).unwrap();
        let again = Behaviour::of(&replay_of(builtin("template-rs")), 0).unwrap();
        let expander = Behaviour::of(&replay_of(builtin("expander-rs")), 0).unwrap();
        // The template copied until round 20, then idle: it plays rounds 0–19 as the template did
        // and differs from round 20 on — in its commands that round (the template attacks from
        // round 0 on and always has a neighbour to attack on a map this small), and in what it
        // sees from round 21 on.
        let mut template_then_idle = builtin("template-rs");
        let partial = replay_of(move |obs| if obs.round < 20 { template_then_idle(obs) } else { Vec::new() });
        let partial = Behaviour::of(&partial, 0).unwrap();

        let played = template.rounds.len().max(partial.rounds.len());
        assert_eq!(behaviour_similarity(&template, &again), Some(1.0));
        assert_eq!(behaviour_similarity(&template, &partial), Some(20.0 / played as f64));
        assert_eq!(behaviour_similarity(&partial, &template), behaviour_similarity(&template, &partial));
        let different = behaviour_similarity(&template, &expander).unwrap();
        assert!(different < BEHAVIOUR_FLAG, "{different}");
        // On another map nothing is compared.
        let other = Behaviour { map: "another".into(), ..template.clone() };
        assert_eq!(behaviour_similarity(&template, &other), None);
    }

    #[test]
    fn pairs_are_ranked_by_code_and_by_behaviour_and_a_pair_without_play_only_by_code() {
        let play = |rounds: &[(u64, Option<u64>)]| Behaviour {
            map: "m".into(),
            rounds: rounds.iter().enumerate().map(|(r, (seen, did))| (r as u32, *seen, *did)).collect(),
        };
        let profiles = [
            // 0: the expander, playing 1, 2, 3, 4 in the observations 10, 11, 12, 13.
            Profile {
                code: Fingerprints::of(EXPANDER),
                behaviour: Some(play(&[(10, Some(1)), (11, Some(2)), (12, Some(3)), (13, Some(4))])),
            },
            // 1: the template, playing as 0 for two rounds, then otherwise (so it sees otherwise).
            Profile {
                code: Fingerprints::of(TEMPLATE),
                behaviour: Some(play(&[(10, Some(1)), (11, Some(2)), (12, Some(9)), (99, Some(9))])),
            },
            // 2: the disguised expander, not judged yet.
            Profile { code: Fingerprints::of(&disguised_expander()), behaviour: None },
        ];
        let (by_code, by_behaviour) = ranked_pairs(&profiles, 10);
        let pairs = |l: &[Pair]| l.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>();
        // Code: the copy's pair first; the template against either expander after it.
        assert_eq!(pairs(&by_code)[0], (0, 2));
        assert_eq!(by_code.len(), 3);
        assert!(by_code[1].code < CODE_FLAG && by_code[2].code < CODE_FLAG, "{by_code:?}");
        // Behaviour: only the pair of two judged agents, alike in 2 rounds of 4.
        assert_eq!(pairs(&by_behaviour), [(0, 1)]);
        assert_eq!(by_behaviour[0].behaviour, Some(0.5));
        assert_eq!(by_code[0].behaviour, None);
        // At most `top` of each.
        let (by_code, by_behaviour) = ranked_pairs(&profiles, 1);
        assert_eq!((by_code.len(), by_behaviour.len()), (1, 1));
    }

    #[test]
    fn a_base_file_keeps_two_agents_grown_from_the_template_apart() {
        // Each keeps the whole template and adds a function of its own: the expander's
        // `potrebna_sila`, or a breadth-first search of its own.
        let helper = &EXPANDER[EXPANDER.find("def potrebna_sila").unwrap()..EXPANDER.find("def decide").unwrap()];
        let one = format!("{TEMPLATE}\n\n{helper}");
        let other = format!(
            "{TEMPLATE}\n\ndef far(start, cells):\n    seen = {{start: 0}}\n    todo = [start]\n    while todo:\n        \
             c = todo.pop(0)\n        for s in cells[c]:\n            if s not in seen:\n                \
             seen[s] = seen[c] + 1\n                todo.append(s)\n    return max(seen.values())\n"
        );
        let (one, other) = (Fingerprints::of(&one), Fingerprints::of(&other));
        // Without a base, the template they share is most of either: flagged.
        assert!(code_similarity(&one, &other) >= CODE_FLAG, "{}", code_similarity(&one, &other));
        // With the template as the base only their own code is compared: nothing alike.
        let base = Fingerprints::of(TEMPLATE);
        let (one, other) = (one.without(&base), other.without(&base));
        assert!(!one.is_empty() && !other.is_empty());
        assert!(code_similarity(&one, &other) < CODE_FLAG / 2.0, "{}", code_similarity(&one, &other));
        // A copy of the template alone has nothing left to compare.
        assert!(Fingerprints::of(TEMPLATE).without(&base).is_empty());
    }
}
