//! The site's pages, rendered on the server by maud's `html!` templates, which escape every
//! value put in them (addresses, file and agent names, logs, reports): only the page's own style
//! and script go in as they are. The pages' only script re-reads a page's live part when the
//! server says something changed (server-sent events), and puts it in as the server rendered it.

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;

use super::config::Phase;
use super::store::{AuditEntry, BoardRow, FinalRecord, FinalState, Outcome, Submission, SubmissionState};
use super::{Arena, FinalSeat, User};

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

/// Re-reads `#live` from `?part=1` at each `changed` event (the first, on connecting, included).
const SCRIPT: &str = r#"
(function () {
  var live = document.getElementById('live');
  if (!live || !window.EventSource) return;
  var busy = false, again = false;
  function reload() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(live.dataset.part, {credentials: 'same-origin'}).then(function (r) { return r.ok ? r.text() : null; })
      .then(function (t) { if (t !== null) live.innerHTML = t; })
      .finally(function () { busy = false; if (again) { again = false; reload(); } });
  }
  // The first event too: a change between the page's rendering and the stream's start is not missed.
  new EventSource('/events').addEventListener('changed', reload);
})();
"#;

/// A whole page: `body` in the site's frame.
pub fn layout(a: &Arena, user: Option<&User>, title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · " (a.config.name) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    a.name href="/" { (a.config.name) }
                    a href="/board" { "leaderboard" }
                    a href="/final" { "final" }
                    @match user {
                        Some(u) => {
                            a href="/me" { "your submission" }
                            @if u.organiser { " " a href="/org" { "organisers" } }
                            span.muted { (u.email) }
                            form method="post" action="/signout" {
                                input type="hidden" name="csrf" value=(u.csrf);
                                button { "sign out" }
                            }
                        }
                        None => { a href="/signin" { "sign in" } }
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

fn when(a: &Arena, unix: i64) -> String {
    jiff::Timestamp::from_second(unix).map(|t| a.config.local(t)).unwrap_or_default()
}

fn phase_line(a: &Arena, phase: Phase) -> String {
    let s = &a.config.schedule;
    match phase {
        Phase::BeforeRegistration => format!("Sign-in opens at {}.", a.config.local(s.registration)),
        Phase::Registration => format!("Registration: uploads open at {}.", a.config.local(s.testing)),
        Phase::Testing => format!("Testing: upload until {} (the last upload counts).", a.config.local(s.deadline)),
        Phase::Closed => format!(
            "The deadline has passed ({}); the final is at {}.",
            a.config.local(s.deadline),
            a.config.local(s.final_)
        ),
        Phase::Final => "The final.".to_string(),
    }
}

pub fn home(a: &Arena, user: Option<&User>, phase: Phase) -> Markup {
    let s = &a.config.schedule;
    let rows = [
        ("Registration", s.registration),
        ("Testing opens", s.testing),
        ("Deadline (last upload)", s.deadline),
        ("Live final", s.final_),
    ];
    html! {
        h1 { (a.config.name) }
        p #phase { (phase_line(a, phase)) }
        @if user.is_some() {
            p { a href="/me" { "Your submission" } " · " a href="/board" { "the leaderboard" } }
        } @else {
            p { a href="/signin" { "Sign in with your e-mail address" } " to upload an agent." }
        }
        h2 { "Phases" }
        table {
            @for (what, t) in rows { tr { td { (what) } td { (a.config.local(t)) } } }
        }
        p.muted {
            "Times in " (a.config.tz_name) ". The leaderboard plays each submission once against the Council on the \
             reference map; the top eight meet in the live final."
        }
    }
}

pub fn signin_form(error: Option<&str>) -> Markup {
    html! {
        h1 { "Sign in" }
        @if let Some(e) = error { p.refused { (e) } }
        p { "Your e-mail address is your identity: a link to sign in is sent to it." }
        form method="post" action="/signin" {
            label { "E-mail address " input type="email" name="email" required autocomplete="email"; }
            " "
            button { "Send the link" }
        }
    }
}

pub fn signin_sent(email: &str) -> Markup {
    html! {
        h1 { "Check your e-mail" }
        p #sent { "A sign-in link was sent to " b { (email) } ". Open it in this browser." }
    }
}

pub fn signin_confirm(code: &str, email: &str) -> Markup {
    html! {
        h1 { "Sign in" }
        form method="post" action={ "/signin/" (code) } {
            p { "Sign in as " b { (email) } "?" }
            button #confirm { "Sign in" }
        }
    }
}

fn state_label(s: SubmissionState) -> &'static str {
    match s {
        SubmissionState::Queued => "queued",
        SubmissionState::Checking => "checking",
        SubmissionState::Running => "running the match",
        SubmissionState::Scored => "scored",
        SubmissionState::Disqualified => "disqualified",
        SubmissionState::CheckFailed => "check failed",
        SubmissionState::Error => "not judged (the judge's error)",
        SubmissionState::Superseded => "superseded (a newer upload came before it was judged)",
    }
}

fn share(o: &Outcome) -> String {
    o.share.map_or("—".into(), |s| format!("{s:.2} %"))
}

/// A refusal: what was refused and why (`status`), `form` again, and a way back.
pub fn refusal(user: Option<&User>, status: u16, why: &str, form: Markup) -> Markup {
    html! {
        h1 { "Not done" }
        p.refused role="alert" { (status) ": " (why) }
        (form)
        p {
            @if user.is_some() {
                a href="/me" { "Back to your submission" } " · " a href="/board" { "the leaderboard" }
            } @else {
                a href="/signin" { "Sign in" } " · " a href="/" { "the competition's page" }
            }
        }
    }
}

/// The phase, and the upload form while uploads are open: the one place of a page that says
/// the phase.
pub fn upload_form(a: &Arena, user: &User, phase: Phase) -> Markup {
    if phase != Phase::Testing {
        return html! { p.muted #closed { (phase_line(a, phase)) } };
    }
    html! {
        p.muted #phase { (phase_line(a, phase)) }
        form method="post" action="/upload" enctype="multipart/form-data" #upload {
            input type="hidden" name="csrf" value=(user.csrf);
            label { "Your agent " input type="file" name="file" accept=".py" required; }
            " "
            button { "Upload" }
            " "
            span.muted {
                "one .py file, at most " (a.config.limits.upload_bytes / 1024) " KiB; it replaces your last one"
            }
        }
    }
}

/// The page of one's submissions: what stays (the upload form) and what follows the changes.
pub fn me(
    a: &Arena,
    user: &User,
    phase: Phase,
    current: Option<&(Submission, Option<Outcome>)>,
    subs: &[Submission],
) -> (Markup, Markup) {
    let head = html! { h1 { "Your submission" } (upload_form(a, user, phase)) };
    let inner = html! {
        @match current {
            Some((s, o)) => (status(a, s, o.as_ref())),
            None => p { "No submission yet." },
        }
        (history(a, subs))
    };
    (head, inner)
}

fn history(a: &Arena, subs: &[Submission]) -> Markup {
    if subs.len() < 2 {
        return html! {};
    }
    html! {
        h2 { "Your uploads" }
        p.muted { "The last one counts." }
        table #history {
            tr { th { "#" } th { "uploaded" } th { "file" } th { "state" } }
            @for s in subs {
                tr {
                    td { a href={ "/me/" (s.id) } { (s.id) } }
                    td { (when(a, s.uploaded)) }
                    td { (s.file_name) }
                    td class={ "state " (s.state.as_str()) } { (state_label(s.state)) }
                }
            }
        }
    }
}

pub fn status(a: &Arena, s: &Submission, o: Option<&Outcome>) -> Markup {
    // A failed check's reason is its problems, listed once by the check's report below.
    let listed_below = s.state == SubmissionState::CheckFailed && !s.check.is_empty();
    html! {
        h2 { "Submission " (s.id) ": " span #state class={ "state " (s.state.as_str()) } { (state_label(s.state)) } }
        p { (s.file_name) " · " (s.agent_name) " · " (s.bytes) " bytes · uploaded " (when(a, s.uploaded)) }
        @if !s.reason.is_empty() && !listed_below { p #reason .refused { (s.reason) } }
        @if let Some(o) = o {
            // One value a row: the table fits a phone.
            table #result .result {
                caption { "The judged match" }
                tr { th scope="row" { "share" } td { (share(o)) } }
                tr { th scope="row" { "tie-break round" } td { (o.tiebreak.map_or("—".into(), |t| t.to_string())) } }
                tr { th scope="row" { "cells" } td { (o.cells) } }
                tr { th scope="row" { "violations" } td { (o.violations) } }
                tr { th scope="row" { "rounds" } td { (o.rounds) } }
                tr {
                    th scope="row" { "the Council fell" }
                    td { (o.council_fell.map_or("no".into(), |r| format!("in round {r}"))) }
                }
            }
            @if !o.times.slowest.is_empty() {
                // Where the time went, against the judge's limit (a timeout is over it).
                p #slowest { "Slowest answers: " (o.times.text()) }
            }
            p {
                a href={ "/replay/" (s.id) } { "the replay" }
                " · "
                a href={ "/me/" (s.id) "/log" } { "your agent's log" }
            }
        }
        @if !s.check.is_empty() { (check_report(&s.check, s.id)) }
        @if s.state.is_being_judged() { p.muted { "This page updates by itself." } }
    }
}

fn check_report(doc: &str, id: i64) -> Markup {
    let Ok(v) = serde_json::from_str::<Value>(doc) else { return html! {} };
    let list = |key: &str| -> Vec<String> {
        v[key].as_array().map_or(Vec::new(), |l| l.iter().filter_map(|x| x.as_str()).map(str::to_string).collect())
    };
    let verdict = if v["ok"] == true { "passes" } else { "fails" };
    html! {
        h3 { "The check (as " code { "gbely check" } "): " (verdict) }
        ul #problems .refused { @for x in list("problems") { li { (x) } } }
        ul #warnings { @for x in list("warnings") { li { (x) } } }
        ul.muted { @for x in list("notes") { li { (x) } } }
        // A failed check keeps its test match's log (the traceback of an agent that crashed).
        @if v["log"].is_string() {
            p {
                a href={ "/me/" (id) "/log" } { "Your agent's log in the check" }
                " (what it printed, and the traceback of a crash)"
            }
        }
    }
}

pub fn board(a: &Arena, rows: &[BoardRow], flash: &[(Submission, Outcome)]) -> Markup {
    html! {
        div.cols {
            section {
                h1 { "Leaderboard" }
                p.muted {
                    "Each participant's last upload against the Council on the reference map: share of the map, then \
                     the round the share was first reached (lower is better). A disqualified submission is not on it."
                }
                table #board {
                    tr {
                        th.num { "#" } th { "agent" } th { "version" } th.num { "share" }
                        th.num { "tie-break round" } th.num { "violations" } th {}
                    }
                    @for r in rows {
                        @let (s, o) = (&r.submission, &r.outcome);
                        tr {
                            td.num { (r.rank) }
                            td.agent {
                                (s.name_alone())
                                // The last result stands while a newer upload (or a re-judging) is judged.
                                @if r.pending { " " span class="pending muted" { "· being judged" } }
                            }
                            td { @if s.version.is_empty() { "—" } @else { (s.version) } }
                            td.num { (share(o)) }
                            td.num { (o.tiebreak.map_or("—".into(), |t| t.to_string())) }
                            td.num { (o.violations) }
                            td { a href={ "/replay/" (s.id) } { "replay" } }
                        }
                    }
                }
                @if rows.is_empty() { p.muted { "Nobody is on the leaderboard yet." } }
            }
            section {
                h2 { "Flash victory" }
                p.muted { "The Council eliminated, the lowest round first (any upload of the testing period)." }
                table #flash {
                    tr { th.num { "#" } th { "agent" } th.num { "round" } th { "uploaded" } th {} }
                    @for (k, (s, o)) in flash.iter().enumerate() {
                        tr {
                            td.num { (k + 1) }
                            td { (s.agent_name) }
                            td.num { (o.council_fell.unwrap_or_default()) }
                            td { (when(a, s.uploaded)) }
                            td { a href={ "/replay/" (s.id) } { "replay" } }
                        }
                    }
                }
                @if flash.is_empty() { p.muted { "The Council has not fallen yet." } }
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
fn score(x: Option<f64>, flag: f64, own_line: bool) -> Markup {
    html! {
        @match x {
            Some(x) if x >= flag => {
                (percent(x))
                @if own_line { br; } @else { " " }
                strong.refused { "flagged" }
            }
            Some(x) => (percent(x)),
            None => span.muted { "—" },
        }
    }
}

fn review_section(review: &Review) -> Markup {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let who = |s: &Submission| html! { (s.email) " " span.muted { "(#" (s.id) ", " (s.agent_name) ")" } };
    let table = |id: &str, caption: &str, rows: &[ReviewRow]| -> Markup {
        if rows.is_empty() {
            return html! { p.muted id=(id) { "No pair to compare yet." } };
        }
        html! {
            table id=(id) .review {
                caption { (caption) }
                thead {
                    tr {
                        th scope="col" { "participants (upload, agent)" }
                        th scope="col" .num { "code" }
                        th scope="col" .num { "behaviour" }
                        th scope="col" { "files" }
                    }
                }
                tbody {
                    @for r in rows {
                        tr {
                            td { (who(&r.a)) " and " (who(&r.b)) }
                            td.num { (score(Some(r.code), CODE_FLAG, true)) }
                            td.num { (score(r.behaviour, BEHAVIOUR_FLAG, true)) }
                            td { a href={ "/org/similar/" (r.a.id) "/" (r.b.id) } { "side by side" } }
                        }
                    }
                }
            }
        }
    };
    html! {
        h2 #similarity { "Similarity review" }
        p.muted {
            "Every participant's last upload (" (review.uploads) ") against every other's, for the code review \
             before the final (docs/arena.md, \"The similarity review\"). "
            b { "Code" }
            ": the share of the smaller file's fingerprints (normalised Python tokens: names and literals forgotten) \
             that the other file has too; flagged from " (percent(CODE_FLAG)) ". "
            b { "Behaviour" }
            ": the share of rounds of their leaderboard matches in which both agents, seeing the same, commanded the \
             same; flagged from " (percent(BEHAVIOUR_FLAG)) ". A flag asks for a look, not a verdict."
        }
        (table("similar-code", "The most alike by code", &review.by_code))
        (table("similar-behaviour", "The most alike by behaviour", &review.by_behaviour))
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
pub fn compare(a: &Arena, sides: [Side<'_>; 2], code: f64, behaviour: Option<f64>) -> Markup {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let column = |s: &Side<'_>| -> Markup {
        let id = s.sub.id;
        html! {
            section {
                h2 { "#" (id) ": " (s.sub.email) }
                p.muted {
                    (s.sub.agent_name) " · " (s.sub.file_name) " · uploaded " (when(a, s.sub.uploaded)) " · "
                    a href={ "/org/file/" (id) } { "download" }
                }
                pre.src aria-label={ "the file of submission " (id) } {
                    @for (k, l) in s.text.lines().enumerate() {
                        @let n = k as u32 + 1;
                        span.ln { (format!("{n:>3} ")) }
                        @if s.shared.contains(&n) { mark.shared { (l) } } @else { (l) }
                        "\n"
                    }
                }
            }
        }
    };
    html! {
        h1 { "Side by side" }
        p #scores {
            // One line of text here; the review's narrow table breaks before the word.
            "Code: " (score(Some(code), CODE_FLAG, false)) " · behaviour: " (score(behaviour, BEHAVIOUR_FLAG, false))
            ". " mark.shared { "Marked" } " lines are covered by a fingerprint the other file has too. "
            a href="/org#similarity" { "Back to the review" }
        }
        div.pair { (column(&sides[0])) (column(&sides[1])) }
    }
}

pub fn organiser(a: &Arena, user: &User, phase: Phase, view: &OrgView) -> Markup {
    let OrgView { subs, outcomes, board, jobs, pending, seating, fin, final_here, audit, review } = view;
    let fin = fin.as_ref();
    let csrf = html! { input type="hidden" name="csrf" value=(user.csrf); };
    let seats = match seating {
        Ok(seats) => html! {
            table #seating {
                tr { th.num { "seat" } th { "region" } th { "agent" } th { "finalist" } }
                @for f in seats {
                    tr {
                        td.num { (f.seat) }
                        td { (gbely_engine::app::runs::final_match::seat_class(f.seat)) }
                        td.agent { (f.name) }
                        td {
                            @match &f.board {
                                Some((place, sub)) => { (place) ". on the board — " (sub.email) }
                                None => "fill (final.fill)",
                            }
                        }
                    }
                }
            }
            p.muted {
                "Seats follow the final map's fixed permutation of the board's order (docs/rules.md §9); seat 0 \
                 starts the resolution of round 0, the Council sits last. An exact tie in the final goes to the \
                 better leaderboard place."
            }
        },
        Err(e) => html! { p.refused { "The seating cannot be shown: " (e) } },
    };
    let cut_off = fin.is_some_and(|f| super::cut_off(f, *final_here));
    let final_state = match fin {
        // Running in the database but not here: the server died during it.
        Some(f) if cut_off => html! {
            p #final-cut .refused {
                "The final (run " (f.id) ") was cut off ("
                (if f.state == FinalState::Interrupted { "the server was stopped" } else { "the server stopped during it" })
                "). Continue it from its last complete round: the engine's state is rebuilt from its replay, the \
                 finalists' agents start again (their memory lost, no violation counted), the projection picks up \
                 where it stopped."
            }
            form method="post" action="/org/final/resume" {
                (csrf)
                button #resume-final { "Continue the final" }
            }
        },
        Some(f) => html! { p { "The final (run " (f.id) "): " (f.state.as_str()) "." } },
        None => html! {},
    };
    let closed = matches!(phase, Phase::Closed | Phase::Final);
    let final_form = if closed && *pending > 0 {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                button #run-final disabled { "Run the final" }
                " "
                span #final-pending .refused {
                    (pending) " upload(s) or re-judging(s) still being judged: the final waits for them (this page \
                     updates by itself)"
                }
            }
        }
    } else if closed && cut_off {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                input type="hidden" name="again" value="1";
                button #run-final { "Run the final again from its start" }
                " "
                span.muted { "the cut-off final's rounds are set aside; " em { "Continue the final" } " keeps them" }
            }
        }
    } else if closed {
        html! {
            form method="post" action="/org/final" {
                (csrf)
                button #run-final { "Run the final" }
                " "
                span.muted {
                    "the seating below on the final map against the final opponent; the projection page opens and \
                     waits for its start"
                }
            }
        }
    } else {
        html! { p.muted { "The final can be run once the deadline has passed." } }
    };
    html! {
        h1 { "Organisers" }
        p { (phase_line(a, phase)) }
        p.muted {
            "jobs: " @for (s, n) in jobs { (s) " " (n) " · " }
            " pending: " span #pending { (pending) } " · database: " (a.store.backend_name())
        }
        h2 { "The finalists" }
        ol #finalists {
            @for r in board.iter().take(8) {
                li {
                    (share(&r.outcome)) " — " (r.submission.agent_name) " (" (r.submission.email) ")"
                    @if r.pending { " " span.muted { "(a newer upload is being judged)" } }
                    " " a href={ "/org/file/" (r.submission.id) } { "download for the review" }
                }
            }
        }
        h3 { "Seating" }
        (seats) (final_state) (final_form)
        h2 { "Submissions" }
        form method="post" action="/org/rejudge" {
            (csrf)
            input type="hidden" name="what" value="all";
            button { "Re-judge every current submission" }
        }
        div.scroll tabindex="0" role="region" aria-label="the submissions (scrolls sideways)" {
            table #submissions {
                tr {
                    th { "#" } th { "address" } th { "uploaded" } th { "agent" } th { "state" } th { "share" }
                    th { "reason" } th {}
                }
                @for s in subs {
                    @let o = outcomes.iter().find(|o| o.submission == s.id);
                    tr {
                        td { (s.id) }
                        td { (s.email) }
                        td { (when(a, s.uploaded)) }
                        td { (s.agent_name) }
                        td class={ "state " (s.state.as_str()) } { (state_label(s.state)) }
                        td.num { (o.map_or(String::new(), share)) }
                        td { (s.reason) }
                        td {
                            a href={ "/org/file/" (s.id) } { "file" }
                            @if o.is_some_and(|o| !o.replay.is_empty()) {
                                " " a href={ "/replay/" (s.id) } { "replay" }
                            }
                            " "
                            form method="post" action="/org/rejudge" style="display:inline" {
                                (csrf)
                                input type="hidden" name="what" value=(s.id);
                                button { "re-judge" }
                            }
                        }
                    }
                }
            }
        }
        (review_section(review))
        h2 { "Audit log" }
        div.scroll tabindex="0" role="region" aria-label="the audit log (scrolls sideways)" {
            table #audit {
                tr { th { "when" } th { "who" } th { "what" } th {} }
                @for e in audit {
                    tr { td { (when(a, e.at)) } td { (e.who) } td { (e.what) } td { (e.detail) } }
                }
            }
        }
    }
}

pub fn final_results(a: &Arena, fin: Option<&FinalRecord>, live_here: Option<i64>) -> Markup {
    let inner = match fin {
        None => html! { p { "The final is at " (a.config.local(a.config.schedule.final_)) "." } },
        Some(f) if f.state == FinalState::Running => html! {
            p #final-state { "The final is being played." }
            @if live_here == Some(f.id) { p { a href="/final/live/" { "Watch it live" } } }
        },
        Some(f) => {
            let doc: Value = serde_json::from_str(&f.result).unwrap_or(Value::Null);
            if let Some(e) = doc["error"].as_str() {
                return html! { h1 { "The final" } p.refused { "The final failed: " (e) } };
            }
            let rows = doc["table"].as_array().into_iter().flatten();
            html! {
                h2 { "Results" }
                table #results {
                    tr {
                        th.num { "place" } th { "agent" } th.num { "share" } th.num { "tie-break round" }
                        th.num { "violations" }
                    }
                    @for r in rows {
                        tr {
                            td.num { (r["rank"].as_u64().map_or("DQ".to_string(), |k| k.to_string())) }
                            td { (r["name"].as_str().unwrap_or("")) }
                            td.num { (r["share"].as_f64().map_or("—".into(), |s| format!("{s:.2} %"))) }
                            td.num { (r["tiebreak"].as_u64().map_or("—".into(), |t| t.to_string())) }
                            td.num { (r["violations"].to_string()) }
                        }
                    }
                }
                p {
                    @match doc["council_fell"].as_u64() {
                        Some(r) => { "The Council fell in round " (r) "." }
                        None => "The Council held out.",
                    }
                    " " a href="/final/replay" { "The replay" } "."
                }
            }
        }
    };
    html! { h1 { "The final" } (inner) }
}
