//! The site's pages, rendered on the server by maud's `html!` templates, which escape every
//! value put in them (addresses, file and agent names, logs, reports): only the page's own style
//! and script, and the rules page's Markdown rendered with its raw HTML escaped, go in as they
//! are. Every text of the site is a message of the catalogues ([`crate::i18n`], [`tr!`](crate::tr)) in the
//! request's language. The pages' only script re-reads a page's live part when the server says
//! something changed (server-sent events), and puts it in as the server rendered it.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;

use super::config::Phase;
use super::i18n::Lang;
use super::store::{AnswerTimes, AuditEntry, BoardRow, FinalRecord, FinalState, Outcome, Submission, SubmissionState};
use super::{Arena, FinalSeat, Ui, User};

/// The site's icon: an oil drop.
pub const ICON: &str = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><path d='M8 1C8 1 3 7 3 10a5 5 0 0 0 10 0C13 7 8 1 8 1z' fill='#3b2a1a'/></svg>";

const STYLE: &str = r#"
:root { color-scheme: light dark; --accent: #b5651d; --muted: #5c5c5c; --bad: #c62828; --good: #2e7d32; }
@media (prefers-color-scheme: dark) { :root { --muted: #a8a8a8; --bad: #ff8a80; --good: #81c784; } }
body { font: 16px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; flex-wrap: wrap; gap: .4em 1.2em; align-items: center; padding: .6em 1em; border-bottom: 1px solid #8884; }
header .name { font-weight: 700; margin-right: auto; }
header a { color: inherit; }
header form { display: inline; margin: 0; }
header .switch { white-space: nowrap; }
main { max-width: 64em; margin: 0 auto; padding: 1em; }
table { border-collapse: collapse; width: 100%; margin: .6em 0 1.2em; }
th, td { text-align: left; padding: .3em .5em; border-bottom: 1px solid #8883; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-weight: 600; }
.state.scored { color: var(--good); } .state.disqualified, .state.check_failed, .state.error { color: var(--bad); }
.refused { color: var(--bad); font-weight: 600; }
.muted { color: var(--muted); }
pre { white-space: pre-wrap; word-break: break-word; background: #8881; padding: .6em; max-height: 30em; overflow: auto; }
button, input[type=submit] { font: inherit; padding: .35em .9em; cursor: pointer; }
input[type=email] { font: inherit; padding: .3em; width: min(24em, 90%); }
.cols { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 1.5em; }
table.result { width: auto; }
caption { text-align: left; font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll:focus-visible { outline: 2px solid var(--accent); }
.review td { overflow-wrap: anywhere; }
.review td.num { overflow-wrap: normal; }
.pair { overflow-wrap: anywhere; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26em), 1fr)); gap: 1em; }
.pair section { min-width: 0; }
.pair pre { max-height: none; overflow: visible; overflow-wrap: anywhere; font-size: 14px; }
.pair .ln { color: var(--muted); user-select: none; }
mark.shared { background: #f5c16c66; color: inherit; }
@media (min-width: 601px) { th, td.num { white-space: nowrap; } }
@media (max-width: 600px) {
  main { padding: .6em; }
  table { font-size: 15px; }
  th, td { padding: .25em .3em; }
  td { overflow-wrap: anywhere; }
  td.num { overflow-wrap: normal; }
}
"#;

/// Re-reads `#live` from `?part=1` at each `changed` event (the first, on connecting, included),
/// except while a form in it is being filled in (a field in focus, or holding typed text):
/// replacing it would throw away what the user typed (an organiser naming a worker, a
/// submission to re-judge). A change held so is shown when no field is being filled in any
/// more: at the next change, or at once when a field is left empty.
const SCRIPT: &str = r#"
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var busy = false, again = false, held = false;
  function filling() {
    var a = document.activeElement;
    if (a && live.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName)) return true;
    var fields = live.querySelectorAll('input:not([type=hidden]), textarea');
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if ((f.type === 'checkbox' || f.type === 'radio') ? f.checked !== f.defaultChecked : f.value !== f.defaultValue) return true;
    }
    return false;
  }
  function reload() {
    if (filling()) { held = true; return; }
    if (busy) { again = true; return; }
    busy = true;
    fetch(live.dataset.part, {credentials: 'same-origin'}).then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { if (t !== null && !filling()) live.innerHTML = t; else if (t !== null) held = true; })
      .finally(function () { busy = false; if (again) { again = false; reload(); } });
  }
  live.addEventListener('focusout', function () {
    setTimeout(function () { if (held && !filling()) { held = false; reload(); } }, 0);
  });
  // The first event too: a change between the page's rendering and the stream's start is not missed.
  new EventSource('/events').addEventListener('changed', reload);
})();
"#;

/// A whole page: `body` in the site's frame, in `ui`'s language, with the language switch.
pub fn layout(a: &Arena, ui: &Ui, user: Option<&User>, title: &str, body: Markup) -> String {
    let l = ui.lang;
    html! {
        (DOCTYPE)
        html lang=(l.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · " (a.config.name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    a.name href="/" { (a.config.name) }
                    a href="/board" { (tr!(l, "nav-board")) }
                    a href="/final" { (tr!(l, "nav-final")) }
                    a href="/export" { (tr!(l, "nav-results")) }
                    @if a.has_rules() { a href="/rules" { (tr!(l, "nav-rules")) } }
                    @match user {
                        Some(u) => {
                            a href="/me" { (tr!(l, "nav-me")) }
                            @if u.organiser { " " a href="/org" { (tr!(l, "nav-org")) } }
                            span.muted { (u.email) }
                            form method="post" action="/signout" {
                                input type="hidden" name="csrf" value=(u.csrf);
                                button { (tr!(l, "nav-signout")) }
                            }
                        }
                        None => { a href="/signin" { (tr!(l, "nav-signin")) } }
                    }
                    span.switch role="group" aria-label=(tr!(l, "nav-language")) {
                        @for (k, other) in Lang::ALL.into_iter().enumerate() {
                            @if k > 0 { " | " }
                            @if other == l {
                                b aria-current="true" lang=(other.code()) { (other.code().to_uppercase()) }
                            } @else {
                                a href={ "/lang?to=" (other.code()) "&back=" (ui.back()) } lang=(other.code())
                                    hreflang=(other.code()) title=(tr!(other, "language-name")) {
                                    (other.code().to_uppercase())
                                }
                            }
                        }
                    }
                }
                main { (body) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// A page's part that follows the server's changes: `part` renders `inner` again.
pub fn live(part: &str, inner: Markup) -> Markup {
    html! { div #live data-part=(part) { (inner) } }
}

fn when(a: &Arena, l: Lang, unix: i64) -> String {
    jiff::Timestamp::from_second(unix).map(|t| a.config.local_in(t, l)).unwrap_or_default()
}

/// The phase in one sentence.
pub fn phase_line(a: &Arena, l: Lang, phase: Phase) -> String {
    let s = &a.config.schedule;
    let at = |t| a.config.local_in(t, l);
    match phase {
        Phase::BeforeRegistration => tr!(l, "phase-before", at = at(s.registration)),
        Phase::Registration => tr!(l, "phase-registration", at = at(s.testing)),
        Phase::Testing => tr!(l, "phase-testing", deadline = at(s.deadline)),
        Phase::Closed => tr!(l, "phase-closed", deadline = at(s.deadline), final = at(s.final_)),
        Phase::Final => tr!(l, "phase-final"),
    }
}

pub fn home(a: &Arena, l: Lang, user: Option<&User>, phase: Phase) -> Markup {
    let s = &a.config.schedule;
    let rows = [
        (tr!(l, "home-registration"), s.registration),
        (tr!(l, "home-testing"), s.testing),
        (tr!(l, "home-deadline"), s.deadline),
        (tr!(l, "home-final"), s.final_),
    ];
    html! {
        h1 { (a.config.name) }
        p #phase { (phase_line(a, l, phase)) }
        @if user.is_some() {
            p { a href="/me" { (tr!(l, "home-me")) } " · " a href="/board" { (tr!(l, "home-board")) } }
        } @else {
            p { a href="/signin" { (tr!(l, "home-signin")) } " " (tr!(l, "home-signin-why")) }
        }
        h2 { (tr!(l, "home-phases")) }
        table {
            @for (what, t) in rows { tr { td { (what) } td { (a.config.local_in(t, l)) } } }
        }
        p.muted { (tr!(l, "home-note", zone = a.config.tz_name.as_str())) }
        @if a.has_rules() { p { a href="/rules" { (tr!(l, "home-rules")) } } }
    }
}

/// The organisers' rules (Markdown, rendered: `rules`).
pub fn rules(l: Lang, html: &str) -> Markup {
    html! {
        article #rules { (PreEscaped(html)) }
        p.muted { (tr!(l, "rules-note")) }
    }
}

pub fn signin_form(l: Lang, error: Option<&str>) -> Markup {
    html! {
        h1 { (tr!(l, "signin-title")) }
        @if let Some(e) = error { p.refused { (e) } }
        p { (tr!(l, "signin-identity")) }
        form method="post" action="/signin" {
            label { (tr!(l, "signin-address")) " " input type="email" name="email" required autocomplete="email"; }
            " "
            button { (tr!(l, "signin-send")) }
        }
    }
}

pub fn signin_sent(l: Lang, email: &str) -> Markup {
    html! {
        h1 { (tr!(l, "signin-check")) }
        p #sent { (tr!(l, "signin-sent")) " " b { (email) } ". " (tr!(l, "signin-open")) }
    }
}

pub fn signin_confirm(l: Lang, code: &str, email: &str) -> Markup {
    html! {
        h1 { (tr!(l, "signin-title")) }
        form method="post" action={ "/signin/" (code) } {
            p { (tr!(l, "signin-as")) " " b { (email) } "?" }
            button #confirm { (tr!(l, "signin-confirm")) }
        }
    }
}

pub fn state_label(l: Lang, s: SubmissionState) -> String {
    match s {
        SubmissionState::Queued => tr!(l, "state-queued"),
        SubmissionState::Checking => tr!(l, "state-checking"),
        SubmissionState::Running => tr!(l, "state-running"),
        SubmissionState::Scored => tr!(l, "state-scored"),
        SubmissionState::Disqualified => tr!(l, "state-disqualified"),
        SubmissionState::CheckFailed => tr!(l, "state-check-failed"),
        SubmissionState::Error => tr!(l, "state-error"),
        SubmissionState::Superseded => tr!(l, "state-superseded"),
    }
}

fn final_state_label(l: Lang, s: FinalState) -> String {
    match s {
        FinalState::Running => tr!(l, "final-state-running"),
        FinalState::Interrupted => tr!(l, "final-state-interrupted"),
        FinalState::Finished => tr!(l, "final-state-finished"),
        FinalState::Failed => tr!(l, "final-state-failed"),
        FinalState::Abandoned => tr!(l, "final-state-abandoned"),
    }
}

/// A share of the map, `12.34 %`.
pub fn share_text(l: Lang, share: Option<f64>) -> String {
    share.map_or("—".into(), |s| format!("{} %", l.decimal(s, 2)))
}

fn share(l: Lang, o: &Outcome) -> String {
    share_text(l, o.share)
}

fn seconds(l: Lang, s: f64) -> String {
    let s = gbely_engine::limits::seconds_text(s);
    if l == Lang::Sk {
        s.replace('.', ",")
    } else {
        s
    }
}

/// The slowest answers against the limit: `round 87: 1.91 s of 2 s, …`.
fn slowest(l: Lang, times: &AnswerTimes) -> String {
    let limit = times.limit.as_secs_f64();
    let one = |&(round, ms): &(u32, u32)| {
        let took = seconds(l, f64::from(ms) / 1000.0);
        match limit {
            Some(limit) => tr!(l, "answer-time-of", round = round, took = took, limit = seconds(l, limit)),
            None => tr!(l, "answer-time", round = round, took = took),
        }
    };
    times.slowest.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// A refusal: what was refused and why (`status`), `form` again, and a way back.
pub fn refusal(l: Lang, user: Option<&User>, status: u16, why: &str, form: Markup) -> Markup {
    html! {
        h1 { (tr!(l, "refused-title")) }
        p.refused role="alert" { (status) ": " (why) }
        (form)
        p {
            @if user.is_some() {
                a href="/me" { (tr!(l, "refused-back-me")) } " · " a href="/board" { (tr!(l, "home-board")) }
            } @else {
                a href="/signin" { (tr!(l, "signin-title")) } " · " a href="/" { (tr!(l, "refused-back-home")) }
            }
        }
    }
}

/// The phase, and the upload form while uploads are open: the one place of a page that says
/// the phase.
pub fn upload_form(a: &Arena, l: Lang, user: &User, phase: Phase) -> Markup {
    if phase != Phase::Testing {
        return html! { p.muted #closed { (phase_line(a, l, phase)) } };
    }
    html! {
        p.muted #phase { (phase_line(a, l, phase)) }
        form method="post" action="/upload" enctype="multipart/form-data" #upload {
            input type="hidden" name="csrf" value=(user.csrf);
            label { (tr!(l, "upload-agent")) " " input type="file" name="file" accept=".py" required; }
            " "
            button { (tr!(l, "upload-button")) }
            " "
            span.muted { (tr!(l, "upload-note", kib = a.config.limits.upload_bytes / 1024)) }
        }
    }
}

/// The page of one's submissions: what stays (the upload form) and what follows the changes.
pub fn me(
    a: &Arena,
    l: Lang,
    user: &User,
    phase: Phase,
    current: Option<&(Submission, Option<Outcome>)>,
    subs: &[Submission],
) -> (Markup, Markup) {
    let head = html! { h1 { (tr!(l, "me-title")) } (upload_form(a, l, user, phase)) };
    let inner = html! {
        @match current {
            Some((s, o)) => (status(a, l, s, o.as_ref())),
            None => p { (tr!(l, "me-none")) },
        }
        (history(a, l, subs))
    };
    (head, inner)
}

fn history(a: &Arena, l: Lang, subs: &[Submission]) -> Markup {
    if subs.len() < 2 {
        return html! {};
    }
    html! {
        h2 { (tr!(l, "me-uploads")) }
        p.muted { (tr!(l, "me-last-counts")) }
        table #history {
            tr { th { "#" } th { (tr!(l, "col-uploaded")) } th { (tr!(l, "col-file")) } th { (tr!(l, "col-state")) } }
            @for s in subs {
                tr {
                    td { a href={ "/me/" (s.id) } { (s.id) } }
                    td { (when(a, l, s.uploaded)) }
                    td { (s.file_name) }
                    td class={ "state " (s.state.as_str()) } { (state_label(l, s.state)) }
                }
            }
        }
    }
}

pub fn status(a: &Arena, l: Lang, s: &Submission, o: Option<&Outcome>) -> Markup {
    // A failed check's reason is its problems, listed once by the check's report below.
    let listed_below = s.failed_its_check();
    html! {
        h2 {
            (tr!(l, "status-title", id = s.id)) " "
            span #state class={ "state " (s.state.as_str()) } { (state_label(l, s.state)) }
        }
        p {
            (s.file_name) " · " (s.agent_name) " · " (tr!(l, "status-bytes", bytes = s.bytes)) " · "
            (tr!(l, "status-uploaded", at = when(a, l, s.uploaded)))
        }
        @if !s.reason.is_empty() && !listed_below { p #reason .refused { (super::judge::reason_in(l, &s.reason)) } }
        @if let Some(o) = o {
            // One value a row: the table fits a phone.
            table #result .result {
                caption { (tr!(l, "result-caption")) }
                tr { th scope="row" { (tr!(l, "col-share")) } td { (share(l, o)) } }
                tr {
                    th scope="row" { (tr!(l, "col-tiebreak")) }
                    td { (o.tiebreak.map_or("—".into(), |t| t.to_string())) }
                }
                tr { th scope="row" { (tr!(l, "col-cells")) } td { (o.cells) } }
                tr { th scope="row" { (tr!(l, "col-violations")) } td { (o.violations) } }
                tr { th scope="row" { (tr!(l, "col-rounds")) } td { (o.rounds) } }
                tr {
                    th scope="row" { (tr!(l, "result-council")) }
                    td {
                        @match o.council_fell {
                            Some(r) => (tr!(l, "result-council-fell", round = r)),
                            None => (tr!(l, "result-council-held")),
                        }
                    }
                }
            }
            @if !o.times.slowest.is_empty() {
                // Where the time went, against the judge's limit (a timeout is over it).
                p #slowest { (tr!(l, "result-slowest")) " " (slowest(l, &o.times)) }
            }
            p {
                a href={ "/replay/" (s.id) } { (tr!(l, "result-replay")) }
                " · "
                a href={ "/me/" (s.id) "/log" } { (tr!(l, "result-log")) }
            }
        }
        @if !s.check.is_empty() { (check_report(l, &s.check, s.id)) }
        @if s.state.is_being_judged() { p.muted { (tr!(l, "status-updates")) } }
    }
}

fn check_report(l: Lang, doc: &str, id: i64) -> Markup {
    let Ok(v) = serde_json::from_str::<Value>(doc) else { return html! {} };
    let list = |key: &str| super::judge::check_lines(l, &v, key);
    let verdict = if v["ok"] == true { tr!(l, "check-passes") } else { tr!(l, "check-fails") };
    html! {
        h3 { (tr!(l, "check-title")) " (" code { "gbely check" } "): " (verdict) }
        ul #problems .refused { @for x in list("problems") { li { (x) } } }
        ul #warnings { @for x in list("warnings") { li { (x) } } }
        ul.muted { @for x in list("notes") { li { (x) } } }
        // A failed check keeps its test match's log (the traceback of an agent that crashed).
        @if v["log"].is_string() {
            p { a href={ "/me/" (id) "/log" } { (tr!(l, "check-log")) } " " (tr!(l, "check-log-what")) }
        }
    }
}

pub fn board(a: &Arena, l: Lang, rows: &[BoardRow], flash: &[(Submission, Outcome)]) -> Markup {
    html! {
        div.cols {
            section {
                h1 { (tr!(l, "board-title")) }
                p.muted { (tr!(l, "board-note")) }
                table #board {
                    tr {
                        th.num { "#" } th { (tr!(l, "col-agent")) } th { (tr!(l, "col-version")) }
                        th.num { (tr!(l, "col-share")) } th.num { (tr!(l, "col-tiebreak")) }
                        th.num { (tr!(l, "col-violations")) } th {}
                    }
                    @for r in rows {
                        @let (s, o) = (&r.submission, &r.outcome);
                        tr {
                            td.num { (r.rank) }
                            td.agent {
                                (s.name_alone())
                                // The last result stands while a newer upload (or a re-judging) is judged.
                                @if r.pending { " " span class="pending muted" { "· " (tr!(l, "board-pending")) } }
                            }
                            td { @if s.version.is_empty() { "—" } @else { (s.version) } }
                            td.num { (share(l, o)) }
                            td.num { (o.tiebreak.map_or("—".into(), |t| t.to_string())) }
                            td.num { (o.violations) }
                            td { a href={ "/replay/" (s.id) } { (tr!(l, "col-replay")) } }
                        }
                    }
                }
                @if rows.is_empty() { p.muted { (tr!(l, "board-empty")) } }
            }
            section {
                h2 { (tr!(l, "flash-title")) }
                p.muted { (tr!(l, "flash-note")) }
                table #flash {
                    tr {
                        th.num { "#" } th { (tr!(l, "col-agent")) } th.num { (tr!(l, "col-round")) }
                        th { (tr!(l, "col-uploaded")) } th {}
                    }
                    @for (k, (s, o)) in flash.iter().enumerate() {
                        tr {
                            td.num { (k + 1) }
                            td { (s.agent_name) }
                            td.num { (o.council_fell.unwrap_or_default()) }
                            td { (when(a, l, s.uploaded)) }
                            td { a href={ "/replay/" (s.id) } { (tr!(l, "col-replay")) } }
                        }
                    }
                }
                @if flash.is_empty() { p.muted { (tr!(l, "flash-empty")) } }
            }
        }
    }
}

/// What the organisers' page shows.
#[derive(Debug)]
pub struct OrgView {
    pub subs: Vec<Submission>,
    pub outcomes: Vec<Outcome>,
    pub board: Vec<BoardRow>,
    pub jobs: Vec<(String, i64)>,
    /// Jobs not done: the final waits for none.
    pub pending: i64,
    /// Who would sit where if the final started now (or why that cannot be said).
    pub seating: Result<Vec<FinalSeat>, String>,
    pub fin: Option<FinalRecord>,
    /// Whether this process is playing the last final (`fin`) now.
    pub final_here: bool,
    pub audit: Vec<AuditEntry>,
    /// The similarity review of the last uploads.
    pub review: Review,
}

/// The similarity review: pairs of last uploads, the most alike first (`similarity`).
#[derive(Clone, Debug, Default)]
pub struct Review {
    /// How many last uploads were compared.
    pub uploads: usize,
    pub by_code: Vec<ReviewRow>,
    pub by_behaviour: Vec<ReviewRow>,
}

/// Two last uploads and how alike they are.
#[derive(Clone, Debug)]
pub struct ReviewRow {
    pub a: Submission,
    pub b: Submission,
    pub code: f64,
    pub behaviour: Option<f64>,
}

fn percent(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// A score, with a word (not only a colour) when it reaches the review's threshold: on a line
/// of its own in the review's narrow table (`own_line`), else after the number.
fn score(l: Lang, x: Option<f64>, flag: f64, own_line: bool) -> Markup {
    html! {
        @match x {
            Some(x) if x >= flag => {
                (percent(x))
                @if own_line { br; } @else { " " }
                strong.refused { (tr!(l, "review-flagged")) }
            }
            Some(x) => (percent(x)),
            None => span.muted { "—" },
        }
    }
}

fn review_section(l: Lang, review: &Review) -> Markup {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let who = |s: &Submission| html! { (s.email) " " span.muted { "(#" (s.id) ", " (s.agent_name) ")" } };
    let table = |id: &str, caption: String, rows: &[ReviewRow]| -> Markup {
        if rows.is_empty() {
            return html! { p.muted id=(id) { (tr!(l, "review-none")) } };
        }
        html! {
            table id=(id) .review {
                caption { (caption) }
                thead {
                    tr {
                        th scope="col" { (tr!(l, "review-col-who")) }
                        th scope="col" .num { (tr!(l, "review-col-code")) }
                        th scope="col" .num { (tr!(l, "review-col-behaviour")) }
                        th scope="col" { (tr!(l, "review-col-files")) }
                    }
                }
                tbody {
                    @for r in rows {
                        tr {
                            td { (who(&r.a)) " " (tr!(l, "review-and")) " " (who(&r.b)) }
                            td.num { (score(l, Some(r.code), CODE_FLAG, true)) }
                            td.num { (score(l, r.behaviour, BEHAVIOUR_FLAG, true)) }
                            td { a href={ "/org/similar/" (r.a.id) "/" (r.b.id) } { (tr!(l, "review-side-by-side")) } }
                        }
                    }
                }
            }
        }
    };
    html! {
        h2 #similarity { (tr!(l, "review-title")) }
        p.muted {
            (tr!(l, "review-note", uploads = review.uploads)) " "
            b { (tr!(l, "review-col-code")) } ": " (tr!(l, "review-code-note", flag = percent(CODE_FLAG))) " "
            b { (tr!(l, "review-col-behaviour")) } ": "
            (tr!(l, "review-behaviour-note", flag = percent(BEHAVIOUR_FLAG)))
        }
        (table("similar-code", tr!(l, "review-by-code"), &review.by_code))
        (table("similar-behaviour", tr!(l, "review-by-behaviour"), &review.by_behaviour))
    }
}

/// One file of a side-by-side view.
#[derive(Debug)]
pub struct Side<'a> {
    pub sub: &'a Submission,
    pub text: &'a str,
    /// The lines (from 1) the other file shares a fingerprint with.
    pub shared: std::collections::BTreeSet<u32>,
}

/// Two uploads' files side by side (stacked on a narrow screen), the shared lines marked.
pub fn compare(a: &Arena, l: Lang, sides: [Side<'_>; 2], code: f64, behaviour: Option<f64>) -> Markup {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let column = |s: &Side<'_>| -> Markup {
        let id = s.sub.id;
        html! {
            section {
                h2 { "#" (id) ": " (s.sub.email) }
                p.muted {
                    (s.sub.agent_name) " · " (s.sub.file_name) " · "
                    (tr!(l, "status-uploaded", at = when(a, l, s.sub.uploaded))) " · "
                    a href={ "/org/file/" (id) } { (tr!(l, "compare-download")) }
                }
                pre.src aria-label=(tr!(l, "compare-file", id = id)) {
                    @for (k, line) in s.text.lines().enumerate() {
                        @let n = k as u32 + 1;
                        span.ln { (format!("{n:>3} ")) }
                        @if s.shared.contains(&n) { mark.shared { (line) } } @else { (line) }
                        "\n"
                    }
                }
            }
        }
    };
    html! {
        h1 { (tr!(l, "compare-title")) }
        p #scores {
            // One line of text here; the review's narrow table breaks before the word.
            (tr!(l, "review-col-code")) ": " (score(l, Some(code), CODE_FLAG, false)) " · "
            (tr!(l, "review-col-behaviour")) ": " (score(l, behaviour, BEHAVIOUR_FLAG, false)) ". "
            mark.shared { (tr!(l, "compare-marked")) } " " (tr!(l, "compare-marked-note")) " "
            a href="/org#similarity" { (tr!(l, "compare-back")) }
        }
        div.pair { (column(&sides[0])) (column(&sides[1])) }
    }
}

pub fn organiser(a: &Arena, l: Lang, user: &User, phase: Phase, view: &OrgView) -> Markup {
    let OrgView { subs, outcomes, board, jobs, pending, seating, fin, final_here, audit, review } = view;
    let fin = fin.as_ref();
    let csrf = html! { input type="hidden" name="csrf" value=(user.csrf); };
    let seats = match seating {
        Ok(seats) => html! {
            table #seating {
                tr {
                    th.num { (tr!(l, "seat-col-seat")) } th { (tr!(l, "seat-col-region")) }
                    th { (tr!(l, "col-agent")) } th { (tr!(l, "seat-col-finalist")) }
                }
                @for f in seats {
                    tr {
                        td.num { (f.seat) }
                        td { (seat_region(l, f.seat)) }
                        td.agent { (f.name) }
                        td {
                            @match &f.board {
                                Some((place, sub)) => { (tr!(l, "seat-on-board", place = *place)) " — " (sub.email) }
                                None => (tr!(l, "seat-fill")),
                            }
                        }
                    }
                }
            }
            p.muted { (tr!(l, "seat-note")) }
        },
        Err(e) => html! { p.refused { (tr!(l, "seat-error")) " " (e) } },
    };
    let cut_off = fin.is_some_and(|f| super::cut_off(f, *final_here));
    let final_state = match fin {
        // Running in the database but not here: the server died during it.
        Some(f) if cut_off => html! {
            p #final-cut .refused {
                @if f.state == FinalState::Interrupted {
                    (tr!(l, "final-cut-stopped", run = f.id))
                } @else {
                    (tr!(l, "final-cut-died", run = f.id))
                }
                " " (tr!(l, "final-cut-continue"))
            }
            form method="post" action="/org/final/resume" {
                (csrf)
                button #resume-final { (tr!(l, "final-continue")) }
            }
        },
        Some(f) => html! { p { (tr!(l, "final-run-state", run = f.id, state = final_state_label(l, f.state))) } },
        None => html! {},
    };
    let closed = matches!(phase, Phase::Closed | Phase::Final);
    let final_form = if closed && *pending > 0 {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                button #run-final disabled { (tr!(l, "final-run")) }
                " "
                span #final-pending .refused { (tr!(l, "final-pending", pending = *pending)) }
            }
        }
    } else if closed && cut_off {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                input type="hidden" name="again" value="1";
                button #run-final { (tr!(l, "final-run-again")) }
                " "
                span.muted { (tr!(l, "final-run-again-note")) }
            }
        }
    } else if closed {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                button #run-final { (tr!(l, "final-run")) }
                " "
                span.muted { (tr!(l, "final-run-note")) }
            }
        }
    } else {
        html! { p.muted { (tr!(l, "final-not-yet")) } }
    };
    html! {
        h1 { (tr!(l, "org-title")) }
        p { (phase_line(a, l, phase)) }
        p.muted {
            (tr!(l, "org-jobs")) " " @for (s, n) in jobs { (s) " " (n) " · " }
            (tr!(l, "org-pending")) " " span #pending { (pending) } " · " (tr!(l, "org-database")) " "
            (a.store.backend_name())
        }
        h2 { (tr!(l, "org-finalists")) }
        ol #finalists {
            @for r in board.iter().take(8) {
                li {
                    (share(l, &r.outcome)) " — " (r.submission.agent_name) " (" (r.submission.email) ")"
                    @if r.pending { " " span.muted { (tr!(l, "org-newer-judged")) } }
                    " " a href={ "/org/file/" (r.submission.id) } { (tr!(l, "org-download-review")) }
                }
            }
        }
        h3 { (tr!(l, "org-seating")) }
        (seats) (final_state) (final_form)
        h2 { (tr!(l, "org-submissions")) }
        form method="post" action="/org/rejudge" {
            (csrf)
            input type="hidden" name="what" value="all";
            button { (tr!(l, "org-rejudge-all")) }
        }
        div.scroll tabindex="0" role="region" aria-label=(tr!(l, "org-submissions-region")) {
            table #submissions {
                tr {
                    th { "#" } th { (tr!(l, "col-address")) } th { (tr!(l, "col-uploaded")) }
                    th { (tr!(l, "col-agent")) } th { (tr!(l, "col-state")) } th { (tr!(l, "col-share")) }
                    th { (tr!(l, "col-reason")) } th {}
                }
                @for s in subs {
                    @let o = outcomes.iter().find(|o| o.submission == s.id);
                    tr {
                        td { (s.id) }
                        td { (s.email) }
                        td { (when(a, l, s.uploaded)) }
                        td { (s.agent_name) }
                        td class={ "state " (s.state.as_str()) } { (state_label(l, s.state)) }
                        td.num { (o.map_or(String::new(), |o| share(l, o))) }
                        td { (super::judge::reason_of(l, s)) }
                        td {
                            a href={ "/org/file/" (s.id) } { (tr!(l, "org-file")) }
                            @if o.is_some_and(|o| !o.replay.is_empty()) {
                                " " a href={ "/replay/" (s.id) } { (tr!(l, "col-replay")) }
                            }
                            " "
                            form method="post" action="/org/rejudge" style="display:inline" {
                                (csrf)
                                input type="hidden" name="what" value=(s.id);
                                button { (tr!(l, "org-rejudge")) }
                            }
                        }
                    }
                }
            }
        }
        (review_section(l, review))
        h2 { (tr!(l, "org-audit")) }
        div.scroll tabindex="0" role="region" aria-label=(tr!(l, "org-audit-region")) {
            table #audit {
                tr { th { (tr!(l, "col-when")) } th { (tr!(l, "col-who")) } th { (tr!(l, "col-what")) } th {} }
                @for e in audit {
                    @let (what, detail) = crate::audit::shown(l, &e.what, &e.detail, &e.act);
                    tr { td { (when(a, l, e.at)) } td { (e.who) } td { (what) } td { (detail) } }
                }
            }
        }
    }
}

/// A final seat's region (a corner or the middle of an edge: docs/rules.md §9) in `l`.
fn seat_region(l: Lang, seat: usize) -> String {
    match gbely_engine::app::runs::final_match::seat_class(seat) {
        "corner" => tr!(l, "seat-region-corner"),
        _ => tr!(l, "seat-region-edge"),
    }
}

pub fn final_results(a: &Arena, l: Lang, fin: Option<&FinalRecord>, live_here: Option<i64>) -> Markup {
    let inner = match fin {
        None => html! { p { (tr!(l, "final-at", at = a.config.local_in(a.config.schedule.final_, l))) } },
        Some(f) if f.state == FinalState::Running => html! {
            p #final-state { (tr!(l, "final-playing")) }
            @if live_here == Some(f.id) { p { a href="/final/live/" { (tr!(l, "final-watch")) } } }
        },
        Some(f) => {
            let doc: Value = serde_json::from_str(&f.result).unwrap_or(Value::Null);
            if let Some(e) = doc["error"].as_str() {
                return html! { h1 { (tr!(l, "final-title")) } p.refused { (tr!(l, "final-failed")) " " (e) } };
            }
            let rows = doc["table"].as_array().into_iter().flatten();
            html! {
                h2 { (tr!(l, "final-results")) }
                table #results {
                    tr {
                        th.num { (tr!(l, "col-place")) } th { (tr!(l, "col-agent")) } th.num { (tr!(l, "col-share")) }
                        th.num { (tr!(l, "col-tiebreak")) } th.num { (tr!(l, "col-violations")) }
                    }
                    @for r in rows {
                        tr {
                            td.num { (r["rank"].as_u64().map_or_else(|| tr!(l, "final-disqualified"), |k| k.to_string())) }
                            td { (r["name"].as_str().unwrap_or("")) }
                            td.num { (share_text(l, r["share"].as_f64())) }
                            td.num { (r["tiebreak"].as_u64().map_or("—".into(), |t| t.to_string())) }
                            td.num { (r["violations"].to_string()) }
                        }
                    }
                }
                p {
                    @match doc["council_fell"].as_u64() {
                        Some(r) => (tr!(l, "final-council-fell", round = r)),
                        None => (tr!(l, "final-council-held")),
                    }
                    " " a href="/final/replay" { (tr!(l, "final-replay")) } "."
                }
            }
        }
    };
    html! { h1 { (tr!(l, "final-title")) } (inner) }
}
