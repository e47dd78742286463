//! The arena's languages: every text a participant reads (pages, forms, refusals, e-mails) is a
//! message of a Project Fluent catalogue, `locales/<language>/arena.ftl`, compiled into the
//! program. Plurals and Slovak's cases live in the catalogues (Fluent's selectors), not in the
//! code; the code names a message with [`tr!`](crate::tr) and hands it its values. A message missing from a
//! catalogue is a failing unit test (both catalogues have the same messages, every message the
//! code names exists, and each formats without an error).
//!
//! The replay viewer and the final's live page are the engine's page, whose texts are keys with
//! English defaults (`gbely_engine::replays::viewer::TEXTS`); their Slovak is a catalogue of its
//! own, `locales/sk/viewer.ftl` (message `viewer-KEY`; a count's text one message per Slovak
//! plural form, `viewer-KEY--one`, `--few`, `--many`, `--other`), made into the page's table by
//! [`viewer_lang`]. Its unit tests hold it to the engine's keys.
//!
//! The language of a request: the `lang` cookie (the switch on every page sets it), else the
//! browser's `Accept-Language`, else the configuration's `language`. Dates are written in the
//! competition's time zone in the language's own way.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};
use gbely_engine::replays::viewer::{ViewerLang, PLURAL_FORMS, TEXTS};
use unic_langid::LanguageIdentifier;

/// A language the arena speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Sk,
    En,
}

/// The language cookie's name.
pub const COOKIE: &str = "lang";

impl Lang {
    /// Every language, in the order the switch shows them.
    pub const ALL: [Lang; 2] = [Lang::Sk, Lang::En];

    /// The language's code (BCP 47), as `<html lang>`, the cookie and the configuration write it.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Sk => "sk",
            Lang::En => "en",
        }
    }

    /// A language from its code (`sk`, `EN`, `sk-SK`: the language part counts).
    pub fn parse(code: &str) -> Option<Lang> {
        let lang = code.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        Lang::ALL.into_iter().find(|l| l.code() == lang)
    }

    /// The language a browser prefers among ours: `Accept-Language`'s entries by their weight
    /// (`q`; an entry of weight 0 is refused), negotiated by fluent-langneg.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut wanted: Vec<(f32, LanguageIdentifier)> = header
            .split(',')
            .filter_map(|entry| {
                let mut parts = entry.split(';');
                let tag = parts.next()?.trim();
                let q = parts
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                (q > 0.0 && tag != "*").then_some(())?;
                Some((q, tag.parse().ok()?))
            })
            .collect();
        // Stable: entries of one weight keep the browser's order.
        wanted.sort_by(|a, b| b.0.total_cmp(&a.0));
        let wanted: Vec<LanguageIdentifier> = wanted.into_iter().map(|(_, l)| l).collect();
        let ours: Vec<LanguageIdentifier> = Lang::ALL.iter().filter_map(|l| l.code().parse().ok()).collect();
        let chosen =
            fluent_langneg::negotiate_languages(&wanted, &ours, None, fluent_langneg::NegotiationStrategy::Lookup);
        chosen.first().and_then(|l| Lang::parse(&l.to_string()))
    }

    /// A date and time as this language writes it (`15. 11. 2026 23:59`, `15 Nov 2026, 23:59`).
    pub fn date(self, t: &jiff::Zoned) -> String {
        match self {
            Lang::Sk => t.strftime("%-d. %-m. %Y %H:%M").to_string(),
            Lang::En => t.strftime("%-d %b %Y, %H:%M").to_string(),
        }
    }

    /// A number with `places` decimals, with this language's decimal mark.
    pub fn decimal(self, x: f64, places: usize) -> String {
        let s = format!("{x:.places$}");
        match self {
            Lang::Sk => s.replace('.', ","),
            Lang::En => s,
        }
    }

    fn catalogue(self) -> &'static FluentBundle<FluentResource> {
        match self {
            Lang::Sk => &SK,
            Lang::En => &EN,
        }
    }
}

/// The catalogues' sources, as compiled in.
pub const SOURCES: [(Lang, &str); 2] =
    [(Lang::Sk, include_str!("locales/sk/arena.ftl")), (Lang::En, include_str!("locales/en/arena.ftl"))];

fn bundle(lang: Lang) -> FluentBundle<FluentResource> {
    let source = SOURCES.iter().find(|(l, _)| *l == lang).map(|(_, s)| *s).unwrap_or_default();
    bundle_of(lang, source)
}

fn bundle_of(lang: Lang, source: &str) -> FluentBundle<FluentResource> {
    let resource = FluentResource::try_new(source.to_string()).unwrap_or_else(|(resource, errors)| {
        eprintln!("gbely arena: the {} catalogue: {errors:?}", lang.code());
        resource
    });
    let id: LanguageIdentifier = lang.code().parse().expect("a language code");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // Plain text in plain-text e-mails and HTML alike: no Unicode isolation marks around values.
    bundle.set_use_isolating(false);
    if let Err(errors) = bundle.add_resource(resource) {
        eprintln!("gbely arena: the {} catalogue: {errors:?}", lang.code());
    }
    bundle
}

static SK: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| bundle(Lang::Sk));
static EN: LazyLock<FluentBundle<FluentResource>> = LazyLock::new(|| bundle(Lang::En));

/// The viewer's catalogues (English is the engine's own `TEXTS`).
pub const VIEWER_SOURCES: [(Lang, &str); 1] = [(Lang::Sk, include_str!("locales/sk/viewer.ftl"))];

static VIEWER_SK: LazyLock<Arc<ViewerLang>> = LazyLock::new(|| {
    let (texts, errors) = viewer_texts(Lang::Sk);
    if !errors.is_empty() {
        eprintln!("gbely arena: the sk viewer catalogue: {errors:?}");
    }
    Arc::new(ViewerLang { code: Lang::Sk.code().to_string(), texts })
});

/// The replay viewer's and the live page's language for `lang`: `None` for English (the
/// engine's own texts).
pub fn viewer_lang(lang: Lang) -> Option<Arc<ViewerLang>> {
    match lang {
        Lang::Sk => Some(Arc::clone(&VIEWER_SK)),
        Lang::En => None,
    }
}

/// The Fluent message id of a viewer's key: `viewer-KEY`, a plural form's `viewer-BASE--FORM`.
fn viewer_id(key: &str) -> String {
    format!("viewer-{}", key.replace('.', "--"))
}

/// The `{name}`s of a viewer's text (what the page's script fills in).
fn placeholders(text: &str) -> std::collections::BTreeSet<&str> {
    text.split('{').skip(1).filter_map(|rest| rest.split_once('}').map(|(name, _)| name)).collect()
}

/// `lang`'s texts of the viewer by the engine's keys, and the messages that failed to format.
/// A message is formatted with each of the English text's `{name}`s given as the text `{name}`,
/// so that the catalogue's `{ $name }` becomes the page's `{name}`; a plural text has each form
/// the catalogue gives.
fn viewer_texts(lang: Lang) -> (BTreeMap<String, String>, Vec<String>) {
    let Some((_, source)) = VIEWER_SOURCES.iter().find(|(l, _)| *l == lang) else {
        return (BTreeMap::new(), Vec::new());
    };
    let bundle = bundle_of(lang, source);
    let (mut texts, mut errors) = (BTreeMap::new(), Vec::new());
    for (key, english) in TEXTS {
        let keys: Vec<String> = match key.strip_suffix(".other") {
            Some(base) => PLURAL_FORMS.iter().map(|f| format!("{base}.{f}")).collect(),
            None if key.ends_with(".one") => continue,
            None => vec![key.to_string()],
        };
        let mut args = FluentArgs::new();
        for name in placeholders(english) {
            args.set(name.to_string(), fluent_bundle::FluentValue::from(format!("{{{name}}}")));
        }
        for key in keys {
            let Some(pattern) = bundle.get_message(&viewer_id(&key)).and_then(|m| m.value()) else { continue };
            let mut errs = Vec::new();
            let text = bundle.format_pattern(pattern, Some(&args), &mut errs).into_owned();
            if errs.is_empty() {
                texts.insert(key, text);
            } else {
                errors.push(format!("{key}: {errs:?}"));
            }
        }
    }
    (texts, errors)
}

/// Message `id` in `lang` with `args`; a message that is missing or fails to format says so on
/// stderr and shows its id (the unit tests keep that from happening).
pub fn text(lang: Lang, id: &str, args: Option<&FluentArgs<'_>>) -> String {
    match format(lang, id, args) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("gbely arena: the {} message {id}: {why}", lang.code());
            id.to_string()
        }
    }
}

/// Message `id` in `lang`, or why it cannot be written.
pub fn format(lang: Lang, id: &str, args: Option<&FluentArgs<'_>>) -> Result<String, String> {
    let bundle = lang.catalogue();
    let pattern = bundle.get_message(id).and_then(|m| m.value()).ok_or("no such message")?;
    let mut errors = Vec::new();
    let s = bundle.format_pattern(pattern, args, &mut errors).into_owned();
    if errors.is_empty() {
        Ok(s)
    } else {
        Err(format!("{errors:?}"))
    }
}

/// `tr!(lang, "id")`, `tr!(lang, "id", name = value, …)`: message `id` of the catalogues in
/// `lang`, its variables (`$name`) given; a number's plural form is chosen by the catalogue.
#[macro_export]
macro_rules! tr {
    ($lang:expr, $id:literal) => {
        $crate::i18n::text($lang, $id, None)
    };
    ($lang:expr, $id:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        let mut args = ::fluent_bundle::FluentArgs::new();
        $( args.set(stringify!($name), ::fluent_bundle::FluentValue::from($value)); )+
        $crate::i18n::text($lang, $id, Some(&args))
    }};
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use fluent_bundle::{FluentArgs, FluentValue};
    use fluent_syntax::ast;

    use super::*;

    /// Each message of a catalogue with its variables.
    fn messages(source: &str) -> Vec<(String, BTreeSet<String>)> {
        let resource = fluent_syntax::parser::parse(source).unwrap_or_else(|(_, e)| panic!("a catalogue: {e:?}"));
        resource
            .body
            .iter()
            .filter_map(|entry| match entry {
                ast::Entry::Message(m) => {
                    assert!(m.attributes.is_empty(), "{}: the code reads no attributes", m.id.name);
                    let mut vars = BTreeSet::new();
                    if let Some(p) = &m.value {
                        variables(p, &mut vars);
                    }
                    Some((m.id.name.to_string(), vars))
                }
                _ => None,
            })
            .collect()
    }

    fn variables(p: &ast::Pattern<&str>, out: &mut BTreeSet<String>) {
        for element in &p.elements {
            if let ast::PatternElement::Placeable { expression } = element {
                expression_variables(expression, out);
            }
        }
    }

    fn expression_variables(e: &ast::Expression<&str>, out: &mut BTreeSet<String>) {
        match e {
            ast::Expression::Select { selector, variants } => {
                inline_variables(selector, out);
                for v in variants {
                    variables(&v.value, out);
                }
            }
            ast::Expression::Inline(i) => inline_variables(i, out),
        }
    }

    fn inline_variables(e: &ast::InlineExpression<&str>, out: &mut BTreeSet<String>) {
        match e {
            ast::InlineExpression::VariableReference { id } => {
                out.insert(id.name.to_string());
            }
            ast::InlineExpression::Placeable { expression } => expression_variables(expression, out),
            _ => {}
        }
    }

    /// The message ids the code names through `tr!`.
    fn used_ids() -> BTreeSet<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut ids = BTreeSet::new();
        for entry in std::fs::read_dir(&dir).expect("src/") {
            let path = entry.expect("an entry").path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("i18n.rs") {
                continue;
            }
            let code = std::fs::read_to_string(&path).expect("a source file");
            // `tr!(` itself, not the end of another macro's name (`include_str!(`).
            for (at, _) in code.match_indices("tr!(") {
                if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let id = code[at..].split('"').nth(1).expect("tr!(lang, \"id\" …)");
                ids.insert(id.to_string());
            }
        }
        ids
    }

    #[test]
    fn both_catalogues_have_the_same_messages_with_the_same_variables() {
        let [(_, sk), (_, en)] = SOURCES;
        let (sk, en) = (messages(sk), messages(en));
        let ids = |m: &[(String, BTreeSet<String>)]| m.iter().map(|(id, _)| id.clone()).collect::<BTreeSet<_>>();
        let only_sk: Vec<_> = ids(&sk).difference(&ids(&en)).cloned().collect();
        let only_en: Vec<_> = ids(&en).difference(&ids(&sk)).cloned().collect();
        assert!(
            only_sk.is_empty() && only_en.is_empty(),
            "untranslated: only in sk {only_sk:?}, only in en {only_en:?}"
        );
        for (id, vars) in &sk {
            let en_vars = &en.iter().find(|(i, _)| i == id).expect("checked above").1;
            assert_eq!(vars, en_vars, "{id}: the languages' variables differ");
        }
    }

    #[test]
    fn every_message_the_code_names_exists_and_every_message_is_used() {
        let used = used_ids();
        assert!(used.len() > 50, "the scan found the code's messages: {used:?}");
        let defined: BTreeSet<String> = messages(SOURCES[1].1).into_iter().map(|(id, _)| id).collect();
        let missing: Vec<_> = used.difference(&defined).collect();
        assert!(missing.is_empty(), "messages the code names that no catalogue has: {missing:?}");
        let unused: Vec<_> = defined.difference(&used).collect();
        assert!(unused.is_empty(), "messages no code names: {unused:?}");
    }

    #[test]
    fn every_message_formats_in_both_languages_with_every_plural_form() {
        for (lang, source) in SOURCES {
            for (id, vars) in messages(source) {
                // Counts that pick each of Slovak's and English's forms; words elsewhere.
                for n in [0, 1, 2, 5, 21] {
                    let mut args = FluentArgs::new();
                    for v in &vars {
                        args.set(v.clone(), FluentValue::from(n));
                    }
                    let s = format(lang, &id, Some(&args)).unwrap_or_else(|e| panic!("{} {id}: {e}", lang.code()));
                    assert!(!s.trim().is_empty(), "{} {id} is empty", lang.code());
                }
            }
        }
    }

    #[test]
    fn slovak_counts_take_their_three_forms() {
        let violations = |n: i64| tr!(Lang::Sk, "mail-scored", share = "1,00", tiebreak = "-", violations = n);
        assert!(violations(1).contains("1 porušenie)"), "{}", violations(1));
        assert!(violations(2).contains("2 porušenia)"), "{}", violations(2));
        assert!(violations(5).contains("5 porušení)"), "{}", violations(5));
        assert!(tr!(Lang::Sk, "status-bytes", bytes = 3).ends_with("3 bajty"));
        assert!(tr!(Lang::En, "mail-scored", share = "1.00", tiebreak = "-", violations = 1).contains("1 violation)"));
        assert!(tr!(Lang::En, "mail-scored", share = "1.00", tiebreak = "-", violations = 2).contains("2 violations)"));
    }

    /// The viewer's Slovak catalogue against the engine's keys: a message for every key (each of
    /// Slovak's plural forms for a count's text), none without a key, and none that fails to
    /// format.
    #[test]
    fn the_viewers_slovak_has_every_key_and_no_other() {
        let [(_, source)] = VIEWER_SOURCES;
        let ids: BTreeSet<String> = messages(source).into_iter().map(|(id, _)| id).collect();
        let mut wanted = BTreeSet::new();
        for (key, _) in TEXTS {
            match key.strip_suffix(".other") {
                Some(base) => wanted.extend(["one", "few", "many", "other"].map(|f| viewer_id(&format!("{base}.{f}")))),
                None if key.ends_with(".one") => {}
                None => {
                    wanted.insert(viewer_id(key));
                }
            }
        }
        let missing: Vec<_> = wanted.difference(&ids).collect();
        let unknown: Vec<_> = ids.difference(&wanted).collect();
        assert!(missing.is_empty() && unknown.is_empty(), "untranslated {missing:?}; no such key {unknown:?}");
        let (texts, errors) = viewer_texts(Lang::Sk);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(texts.len(), ids.len());
        assert!(texts.values().all(|t| !t.trim().is_empty()));
    }

    /// Each Slovak text has exactly the `{name}`s of its English (a plural form: of the English
    /// `.other`'s), so the page fills in every value and shows no `{name}` unfilled.
    #[test]
    fn the_viewers_slovak_has_the_placeholders_of_its_english() {
        let english: BTreeMap<&str, &str> = TEXTS.iter().copied().collect();
        let (texts, _) = viewer_texts(Lang::Sk);
        for (key, text) in &texts {
            let en = english.get(key.as_str()).copied().unwrap_or_else(|| {
                let base = key.rsplit_once('.').expect("a plural form").0;
                english[format!("{base}.other").as_str()]
            });
            assert_eq!(placeholders(text), placeholders(en), "{key}: {text:?} against {en:?}");
        }
        let sk = viewer_lang(Lang::Sk).expect("Slovak");
        assert_eq!(sk.code, "sk");
        assert_eq!(sk.texts["round-n"], "kolo {r}");
        assert_eq!(sk.texts["n-commands.few"], "{n} príkazy");
        assert!(viewer_lang(Lang::En).is_none(), "English is the engine's own");
    }

    #[test]
    fn the_browser_chooses_among_our_languages_by_weight() {
        assert_eq!(Lang::from_accept_language("sk-SK,sk;q=0.9,en-US;q=0.8,en;q=0.7"), Some(Lang::Sk));
        assert_eq!(Lang::from_accept_language("en-GB,en;q=0.9"), Some(Lang::En));
        assert_eq!(Lang::from_accept_language("de-DE,en;q=0.5,sk;q=0.7"), Some(Lang::Sk));
        assert_eq!(Lang::from_accept_language("sk;q=0,en"), Some(Lang::En));
        assert_eq!(Lang::from_accept_language("de, fr"), None);
        assert_eq!(Lang::from_accept_language(""), None);
        assert_eq!(Lang::parse("SK"), Some(Lang::Sk));
        assert_eq!(Lang::parse("xx"), None);
    }

    #[test]
    fn dates_in_each_languages_way() {
        let t: jiff::Zoned = "2026-11-15T23:59:59+01:00[Europe/Bratislava]".parse().expect("a date");
        assert_eq!(Lang::Sk.date(&t), "15. 11. 2026 23:59");
        assert_eq!(Lang::En.date(&t), "15 Nov 2026, 23:59");
        assert_eq!(Lang::Sk.decimal(3.5, 2), "3,50");
    }
}
