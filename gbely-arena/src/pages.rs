//! The site's pages, rendered on the server. Every text a user gave (addresses, file and agent
//! names, logs, reports) goes through [`esc`]; the pages' only script re-reads a page's live
//! part when the server says something changed (server-sent events), and puts it in as the
//! server rendered it.

use serde_json::Value;

use super::config::Phase;
use super::store::{AuditEntry, BoardRow, FinalRecord, FinalState, Outcome, Submission, SubmissionState};
use super::{Arena, FinalSeat, User};

pub use gbely_engine::replays::viewer::escape_html as esc;

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

/// A whole page.
pub fn layout(a: &Arena, user: Option<&User>, title: &str, body: &str) -> String {
    let who = match user {
        Some(u) => format!(
            "<a href=/me>your submission</a>{}<span class=muted>{}</span>\
             <form method=post action=/signout><input type=hidden name=csrf value=\"{}\"><button>sign out</button></form>",
            if u.organiser { " <a href=/org>organisers</a>" } else { "" },
            esc(&u.email),
            esc(&u.csrf)
        ),
        None => "<a href=/signin>sign in</a>".to_string(),
    };
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width, initial-scale=1\">\
         <title>{title} · {name}</title><style>{STYLE}</style></head><body>\
         <header><a class=name href=/>{name}</a><a href=/board>leaderboard</a><a href=/final>final</a><a href=/export>results</a>{who}</header>\
         <main>{body}</main><script>{SCRIPT}</script></body></html>",
        title = esc(title),
        name = esc(&a.config.name),
    )
}

/// A page's part that follows the server's changes: `part` renders `inner` again.
pub fn live(part: &str, inner: &str) -> String {
    format!("<div id=live data-part=\"{}\">{inner}</div>", esc(part))
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

pub fn home(a: &Arena, user: Option<&User>, phase: Phase) -> String {
    let s = &a.config.schedule;
    let rows = [
        ("Registration", s.registration),
        ("Testing opens", s.testing),
        ("Deadline (last upload)", s.deadline),
        ("Live final", s.final_),
    ]
    .iter()
    .map(|(what, t)| format!("<tr><td>{what}</td><td>{}</td></tr>", esc(&a.config.local(*t))))
    .collect::<String>();
    let next = match user {
        Some(_) => "<p><a href=/me>Your submission</a> · <a href=/board>the leaderboard</a></p>".to_string(),
        None => "<p><a href=/signin>Sign in with your e-mail address</a> to upload an agent.</p>".to_string(),
    };
    format!(
        "<h1>{}</h1><p id=phase>{}</p>{next}<h2>Phases</h2><table>{rows}</table>\
         <p class=muted>Times in {}. The leaderboard plays each submission once against the Council on the \
         reference map; the top eight meet in the live final.</p>",
        esc(&a.config.name),
        esc(&phase_line(a, phase)),
        esc(&a.config.tz_name)
    )
}

pub fn signin_form(error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| format!("<p class=refused>{}</p>", esc(e)));
    format!(
        "<h1>Sign in</h1>{error}<p>Your e-mail address is your identity: a link to sign in is sent to it.</p>\
         <form method=post action=/signin><label>E-mail address <input type=email name=email required autocomplete=email></label> \
         <button>Send the link</button></form>"
    )
}

pub fn signin_sent(email: &str) -> String {
    format!(
        "<h1>Check your e-mail</h1><p id=sent>A sign-in link was sent to <b>{}</b>. Open it in this browser.</p>",
        esc(email)
    )
}

pub fn signin_confirm(code: &str, email: &str) -> String {
    format!(
        "<h1>Sign in</h1><form method=post action=\"/signin/{}\"><p>Sign in as <b>{}</b>?</p><button id=confirm>Sign in</button></form>",
        esc(code),
        esc(email)
    )
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

/// The phase, and the upload form while uploads are open: the one place of a page that says
/// the phase.
pub fn upload_form(a: &Arena, user: &User, phase: Phase) -> String {
    if phase != Phase::Testing {
        return format!("<p class=muted id=closed>{}</p>", esc(&phase_line(a, phase)));
    }
    format!(
        "<p class=muted id=phase>{}</p><form method=post action=/upload enctype=multipart/form-data id=upload>\
         <input type=hidden name=csrf value=\"{}\"><label>Your agent <input type=file name=file accept=\".py\" required></label> \
         <button>Upload</button> <span class=muted>one .py file, at most {} KiB; it replaces your last one</span></form>",
        esc(&phase_line(a, phase)),
        esc(&user.csrf),
        a.config.limits.upload_bytes / 1024
    )
}

/// The page of one's submissions: what stays (the upload form) and what follows the changes.
pub fn me(
    a: &Arena,
    user: &User,
    phase: Phase,
    current: Option<&(Submission, Option<Outcome>)>,
    subs: &[Submission],
) -> (String, String) {
    let cur = match current {
        Some((s, o)) => status(a, s, o.as_ref()),
        None => "<p>No submission yet.</p>".to_string(),
    };
    let head = format!("<h1>Your submission</h1>{}", upload_form(a, user, phase));
    (head, format!("{cur}{}", history(a, subs)))
}

fn history(a: &Arena, subs: &[Submission]) -> String {
    if subs.len() < 2 {
        return String::new();
    }
    let rows: String = subs
        .iter()
        .map(|s| {
            format!(
                "<tr><td><a href=/me/{id}>{id}</a></td><td>{}</td><td>{}</td><td class=\"state {st}\">{}</td></tr>",
                esc(&when(a, s.uploaded)),
                esc(&s.file_name),
                esc(state_label(s.state)),
                id = s.id,
                st = esc(s.state.as_str())
            )
        })
        .collect();
    format!("<h2>Your uploads</h2><p class=muted>The last one counts.</p><table id=history><tr><th>#</th><th>uploaded</th><th>file</th><th>state</th></tr>{rows}</table>")
}

pub fn status(a: &Arena, s: &Submission, o: Option<&Outcome>) -> String {
    let mut out = format!(
        "<h2>Submission {id}: <span class=\"state {st}\" id=state>{label}</span></h2>\
         <p>{file} · {name} · {bytes} bytes · uploaded {at}</p>",
        id = s.id,
        st = esc(s.state.as_str()),
        label = esc(state_label(s.state)),
        file = esc(&s.file_name),
        name = esc(&s.agent_name),
        bytes = s.bytes,
        at = esc(&when(a, s.uploaded)),
    );
    // A failed check's reason is its problems, listed once by the check's report below.
    let listed_below = s.state == SubmissionState::CheckFailed && !s.check.is_empty();
    if !s.reason.is_empty() && !listed_below {
        out += &format!("<p id=reason class=refused>{}</p>", esc(&s.reason));
    }
    if let Some(o) = o {
        // One value a row: the table fits a phone.
        let rows = [
            ("share", share(o)),
            ("tie-break round", o.tiebreak.map_or("—".into(), |t| t.to_string())),
            ("cells", o.cells.to_string()),
            ("violations", o.violations.to_string()),
            ("rounds", o.rounds.to_string()),
            ("the Council fell", o.council_fell.map_or("no".into(), |r| format!("in round {r}"))),
        ];
        let rows: String =
            rows.iter().map(|(what, value)| format!("<tr><th scope=row>{what}</th><td>{value}</td></tr>")).collect();
        out += &format!("<table id=result class=result><caption>The judged match</caption>{rows}</table>");
        if !o.times.slowest.is_empty() {
            // Where the time went, against the judge's limit (a timeout is over it).
            out += &format!("<p id=slowest>Slowest answers: {}</p>", esc(&o.times.text()));
        }
        out += &format!(
            "<p><a href=/replay/{id}>the replay</a> · <a href=/me/{id}/log>your agent's log</a></p>",
            id = s.id
        );
    }
    if !s.check.is_empty() {
        out += &check_report(&s.check, s.id);
    }
    if s.state.is_being_judged() {
        out += "<p class=muted>This page updates by itself.</p>";
    }
    out
}

fn check_report(doc: &str, id: i64) -> String {
    let Ok(v) = serde_json::from_str::<Value>(doc) else { return String::new() };
    let list = |key: &str| -> String {
        v[key].as_array().map_or(String::new(), |l| {
            l.iter().filter_map(|x| x.as_str()).map(|x| format!("<li>{}</li>", esc(x))).collect()
        })
    };
    let verdict = if v["ok"] == true { "passes" } else { "fails" };
    // A failed check keeps its test match's log (the traceback of an agent that crashed).
    let log = if v["log"].is_string() {
        format!("<p><a href=/me/{id}/log>Your agent's log in the check</a> (what it printed, and the traceback of a crash)</p>")
    } else {
        String::new()
    };
    format!(
        "<h3>The check (as <code>gbely check</code>): {verdict}</h3><ul id=problems class=refused>{}</ul><ul id=warnings>{}</ul><ul class=muted>{}</ul>{log}",
        list("problems"),
        list("warnings"),
        list("notes")
    )
}

pub fn board(a: &Arena, rows: &[BoardRow], flash: &[(Submission, Outcome)]) -> String {
    let lines: String = rows
        .iter()
        .map(|r| {
            let (s, o) = (&r.submission, &r.outcome);
            // The last result stands while a newer upload (or a re-judging) is judged.
            let pending = if r.pending { " <span class=\"pending muted\">· being judged</span>" } else { "" };
            format!(
                "<tr><td class=num>{}</td><td class=agent>{}{pending}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td><a href=/replay/{}>replay</a></td></tr>",
                r.rank,
                esc(s.name_alone()),
                if s.version.is_empty() { "—".to_string() } else { esc(&s.version) },
                share(o),
                o.tiebreak.map_or("—".into(), |t| t.to_string()),
                o.violations,
                s.id
            )
        })
        .collect();
    let flash_lines: String = flash
        .iter()
        .enumerate()
        .map(|(k, (s, o))| {
            format!(
                "<tr><td class=num>{}</td><td>{}</td><td class=num>{}</td><td>{}</td><td><a href=/replay/{}>replay</a></td></tr>",
                k + 1,
                esc(&s.agent_name),
                o.council_fell.unwrap_or_default(),
                esc(&when(a, s.uploaded)),
                s.id
            )
        })
        .collect();
    let empty = |n: usize, what: &str| if n == 0 { format!("<p class=muted>{what}</p>") } else { String::new() };
    format!(
            "<div class=cols><section><h1>Leaderboard</h1><p class=muted>Each participant's last upload against the Council on the \
             reference map: share of the map, then the round the share was first reached (lower is better). A disqualified \
             submission is not on it.</p><table id=board><tr><th class=num>#</th><th>agent</th><th>version</th><th class=num>share</th>\
             <th class=num>tie-break round</th><th class=num>violations</th><th></th></tr>{lines}</table>{}</section>\
             <section><h2>Flash victory</h2><p class=muted>The Council eliminated, the lowest round first (any upload of the testing period).</p>\
             <table id=flash><tr><th class=num>#</th><th>agent</th><th class=num>round</th><th>uploaded</th><th></th></tr>{flash_lines}</table>{}</section></div>",
            empty(rows.len(), "Nobody is on the leaderboard yet."),
            empty(flash.len(), "The Council has not fallen yet."),
        )
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

/// A score, with a word (not only a colour) when it reaches the review's threshold.
fn score(x: Option<f64>, flag: f64) -> String {
    match x {
        Some(x) if x >= flag => format!("{}<br><strong class=refused>flagged</strong>", percent(x)),
        Some(x) => percent(x),
        None => "<span class=muted>—</span>".to_string(),
    }
}

fn review_section(review: &Review) -> String {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let table = |id: &str, caption: &str, rows: &[ReviewRow]| -> String {
        if rows.is_empty() {
            return format!("<p class=muted id={id}>No pair to compare yet.</p>");
        }
        let lines: String = rows
            .iter()
            .map(|r| {
                let who = |s: &Submission| {
                    format!("{} <span class=muted>(#{}, {})</span>", esc(&s.email), s.id, esc(&s.agent_name))
                };
                format!(
                    "<tr><td>{} and {}</td><td class=num>{}</td><td class=num>{}</td>\
                     <td><a href=/org/similar/{}/{}>side by side</a></td></tr>",
                    who(&r.a),
                    who(&r.b),
                    score(Some(r.code), CODE_FLAG),
                    score(r.behaviour, BEHAVIOUR_FLAG),
                    r.a.id,
                    r.b.id
                )
            })
            .collect();
        format!(
            "<table id={id} class=review><caption>{caption}</caption><thead><tr><th scope=col>participants (upload, agent)</th>\
             <th scope=col class=num>code</th><th scope=col class=num>behaviour</th><th scope=col>files</th></tr></thead>\
             <tbody>{lines}</tbody></table>"
        )
    };
    format!(
        "<h2 id=similarity>Similarity review</h2><p class=muted>Every participant's last upload ({n}) against every other's, \
         for the code review before the final (docs/arena.md, \"The similarity review\"). <b>Code</b>: the share of \
         the smaller file's fingerprints (normalised Python tokens: names and literals forgotten) that the other file has \
         too; flagged from {code}. <b>Behaviour</b>: the share of rounds of their leaderboard matches in which both \
         agents, seeing the same, commanded the same; flagged from {beh}. A flag asks for a look, not a verdict.</p>\
         {by_code}{by_behaviour}",
        n = review.uploads,
        code = percent(CODE_FLAG),
        beh = percent(BEHAVIOUR_FLAG),
        by_code = table("similar-code", "The most alike by code", &review.by_code),
        by_behaviour = table("similar-behaviour", "The most alike by behaviour", &review.by_behaviour),
    )
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
pub fn compare(a: &Arena, sides: [Side<'_>; 2], code: f64, behaviour: Option<f64>) -> String {
    use super::similarity::{BEHAVIOUR_FLAG, CODE_FLAG};
    let column = |s: &Side<'_>| -> String {
        let lines: String = s
            .text
            .lines()
            .enumerate()
            .map(|(k, l)| {
                let n = k as u32 + 1;
                let l = esc(l);
                if s.shared.contains(&n) {
                    format!("<span class=ln>{n:>3} </span><mark class=shared>{l}</mark>\n")
                } else {
                    format!("<span class=ln>{n:>3} </span>{l}\n")
                }
            })
            .collect();
        format!(
            "<section><h2>#{id}: {email}</h2><p class=muted>{name} · {file} · uploaded {at} · \
             <a href=/org/file/{id}>download</a></p><pre class=src aria-label=\"the file of submission {id}\">{lines}</pre></section>",
            id = s.sub.id,
            email = esc(&s.sub.email),
            name = esc(&s.sub.agent_name),
            file = esc(&s.sub.file_name),
            at = esc(&when(a, s.sub.uploaded)),
        )
    };
    format!(
        "<h1>Side by side</h1><p id=scores>Code: {} · behaviour: {}. <mark class=shared>Marked</mark> lines are \
         covered by a fingerprint the other file has too. <a href=/org#similarity>Back to the review</a></p>\
         <div class=pair>{}{}</div>",
        // One line of text here; the review's narrow table breaks before the word.
        score(Some(code), CODE_FLAG).replace("<br>", " "),
        score(behaviour, BEHAVIOUR_FLAG).replace("<br>", " "),
        column(&sides[0]),
        column(&sides[1]),
    )
}

pub fn organiser(a: &Arena, user: &User, phase: Phase, view: &OrgView) -> String {
    let OrgView { subs, outcomes, board, jobs, pending, seating, fin, final_here, audit, review } = view;
    let fin = fin.as_ref();
    let csrf = esc(&user.csrf);
    let rows: String = subs
        .iter()
        .map(|s| {
            let o = outcomes.iter().find(|o| o.submission == s.id);
            format!(
                "<tr><td>{id}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"state {st}\">{}</td><td class=num>{}</td><td>{}</td>\
                 <td><a href=/org/file/{id}>file</a>{replay} <form method=post action=/org/rejudge style=display:inline>\
                 <input type=hidden name=csrf value=\"{csrf}\"><input type=hidden name=what value={id}><button>re-judge</button></form></td></tr>",
                esc(&s.email),
                esc(&when(a, s.uploaded)),
                esc(&s.agent_name),
                esc(state_label(s.state)),
                o.map_or(String::new(), share),
                esc(&s.reason),
                id = s.id,
                st = esc(s.state.as_str()),
                replay = if o.is_some_and(|o| !o.replay.is_empty()) {
                    format!(" <a href=/replay/{}>replay</a>", s.id)
                } else {
                    String::new()
                },
            )
        })
        .collect();
    let finalists: String = board
        .iter()
        .take(8)
        .map(|r| {
            format!(
                "<li>{} — {} ({}){} <a href=/org/file/{}>download for the review</a></li>",
                share(&r.outcome),
                esc(&r.submission.agent_name),
                esc(&r.submission.email),
                if r.pending { " <span class=muted>(a newer upload is being judged)</span>" } else { "" },
                r.submission.id
            )
        })
        .collect();
    let seats = match seating {
        Ok(seats) => {
            let rows: String = seats
                .iter()
                .map(|f| {
                    let who = match &f.board {
                        Some((place, sub)) => format!("{place}. on the board — {}", esc(&sub.email)),
                        None => "fill (final.fill)".to_string(),
                    };
                    format!(
                        "<tr><td class=num>{}</td><td>{}</td><td class=agent>{}</td><td>{who}</td></tr>",
                        f.seat,
                        gbely_engine::app::runs::final_match::seat_class(f.seat),
                        esc(&f.name)
                    )
                })
                .collect();
            format!(
                "<table id=seating><tr><th class=num>seat</th><th>region</th><th>agent</th><th>finalist</th></tr>{rows}</table>\
                 <p class=muted>Seats follow the final map's fixed permutation of the board's order (docs/rules.md §9); \
                 seat 0 starts the resolution of round 0, the Council sits last. An exact tie in the final goes to the \
                 better leaderboard place.</p>"
            )
        }
        Err(e) => format!("<p class=refused>The seating cannot be shown: {}</p>", esc(e)),
    };
    let audit: String = audit
        .iter()
        .map(|e| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&when(a, e.at)),
                esc(&e.who),
                esc(&e.what),
                esc(&e.detail)
            )
        })
        .collect();
    let jobs: String = jobs.iter().map(|(s, n)| format!("{} {n} · ", esc(s))).collect();
    let cut_off = fin.is_some_and(|f| super::cut_off(f, *final_here));
    let final_state = match fin {
        // Running in the database but not here: the server died during it.
        Some(f) if cut_off => format!(
            "<p id=final-cut class=refused>The final (run {id}) was cut off ({why}). Continue it from its last complete \
             round: the engine's state is rebuilt from its replay, the finalists' agents start again (their memory lost, \
             no violation counted), the projection picks up where it stopped.</p>\
             <form method=post action=/org/final/resume><input type=hidden name=csrf value=\"{csrf}\">\
             <button id=resume-final>Continue the final</button></form>",
            id = f.id,
            why = if f.state == FinalState::Interrupted { "the server was stopped" } else { "the server stopped during it" },
        ),
        Some(f) => format!("<p>The final (run {}): {}.</p>", f.id, esc(f.state.as_str())),
        None => String::new(),
    };
    let final_form = if matches!(phase, Phase::Closed | Phase::Final) && *pending > 0 {
        format!(
            "<form method=post action=/org/final><input type=hidden name=csrf value=\"{csrf}\">\
             <button id=run-final disabled>Run the final</button> <span id=final-pending class=refused>{pending} upload(s) or \
             re-judging(s) still being judged: the final waits for them (this page updates by itself)</span></form>"
        )
    } else if matches!(phase, Phase::Closed | Phase::Final) && cut_off {
        format!(
            "<form method=post action=/org/final><input type=hidden name=csrf value=\"{csrf}\">\
             <input type=hidden name=again value=1><button id=run-final>Run the final again from its start</button> \
             <span class=muted>the cut-off final's rounds are set aside; <em>Continue the final</em> keeps them</span></form>"
        )
    } else if matches!(phase, Phase::Closed | Phase::Final) {
        format!(
            "<form method=post action=/org/final><input type=hidden name=csrf value=\"{csrf}\">\
             <button id=run-final>Run the final</button> <span class=muted>the seating below on the final map against the final \
             opponent; the projection page opens and waits for its start</span></form>"
        )
    } else {
        "<p class=muted>The final can be run once the deadline has passed.</p>".to_string()
    };
    format!(
            "<h1>Organisers</h1><p>{}</p><p class=muted>jobs: {jobs} pending: <span id=pending>{pending}</span> · database: {}</p>\
             <h2>The finalists</h2><ol id=finalists>{finalists}</ol><h3>Seating</h3>{seats}{final_state}{final_form}\
             <h2>Submissions</h2><form method=post action=/org/rejudge><input type=hidden name=csrf value=\"{csrf}\">\
             <input type=hidden name=what value=all><button>Re-judge every current submission</button></form>\
             <div class=scroll tabindex=0 role=region aria-label=\"the submissions (scrolls sideways)\"><table id=submissions><tr><th>#</th><th>address</th><th>uploaded</th><th>agent</th><th>state</th><th>share</th><th>reason</th><th></th></tr>{rows}</table></div>\
             {review}<h2>Audit log</h2><div class=scroll tabindex=0 role=region aria-label=\"the audit log (scrolls sideways)\"><table id=audit><tr><th>when</th><th>who</th><th>what</th><th></th></tr>{audit}</table></div>",
            esc(&phase_line(a, phase)),
            a.store.backend_name(),
            review = review_section(review),
        )
}

pub fn final_results(a: &Arena, fin: Option<&FinalRecord>, live_here: Option<i64>) -> String {
    let inner = match fin {
        None => format!("<p>The final is at {}.</p>", esc(&a.config.local(a.config.schedule.final_))),
        Some(f) if f.state == FinalState::Running => {
            let watch = if live_here == Some(f.id) { "<p><a href=\"/final/live/\">Watch it live</a></p>" } else { "" };
            format!("<p id=final-state>The final is being played.</p>{watch}")
        }
        Some(f) => {
            let doc: Value = serde_json::from_str(&f.result).unwrap_or(Value::Null);
            if let Some(e) = doc["error"].as_str() {
                return format!("<h1>The final</h1><p class=refused>The final failed: {}</p>", esc(e));
            }
            let rows: String = doc["table"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    let place = r["rank"].as_u64().map_or("DQ".to_string(), |k| k.to_string());
                    format!(
                        "<tr><td class=num>{place}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
                        esc(r["name"].as_str().unwrap_or("")),
                        r["share"].as_f64().map_or("—".into(), |s| format!("{s:.2} %")),
                        r["tiebreak"].as_u64().map_or("—".into(), |t| t.to_string()),
                        r["violations"],
                    )
                })
                .collect();
            let fell = doc["council_fell"]
                .as_u64()
                .map_or("The Council held out.".to_string(), |r| format!("The Council fell in round {r}."));
            format!(
                "<h2>Results</h2><table id=results><tr><th class=num>place</th><th>agent</th><th class=num>share</th><th class=num>tie-break round</th>\
                 <th class=num>violations</th></tr>{rows}</table><p>{fell} <a href=/final/replay>The replay</a>.</p>"
            )
        }
    };
    format!("<h1>The final</h1>{inner}")
}
