//! The public results (issue 45): once the deadline has passed, or once an organiser opens them
//! on `/org`, anyone can download the leaderboard and the final's results as CSV and JSON, every
//! leaderboard, flash-victory and final replay, and a manifest naming each replay with its
//! SHA-256 and the figures published for it — one by one under `/export/`, or all in one archive
//! (`/export/gbely-results.tar.gz`). `gbely replay verify manifest.json`, run in the unpacked
//! archive, checks every file against the manifest, re-simulates every replay and compares the
//! published figures with each replay's result (`gbely_engine::app::manifest`).
//!
//! Nothing private is published: the participants appear as the leaderboard shows them (agent
//! name and version, submission number), never by their address.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::Path as UrlPath;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use gbely_engine::app::manifest::{
    sha256_hex, ManifestFile, ManifestReplay, PublishedSide, ResultsManifest, MANIFEST_FORMAT, MANIFEST_VERSION,
};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use maud::{html, Markup};

use super::config::Phase;
use super::i18n::Lang;
use super::store::{BoardRow, FinalRecord, FinalState, Outcome, Submission};
use super::{Arena, CsrfForm, OrganiserForm, Shared, Ui, User};

/// The archive's name, and the folder it unpacks into.
pub const ARCHIVE: &str = "gbely-results.tar.gz";
const FOLDER: &str = "gbely-results";

/// Whether the public results are open: the deadline has passed (uploads can no longer change
/// the leaderboard), or an organiser opened them earlier (`opened`, Unix seconds).
pub fn is_open(phase: Phase, opened: Option<i64>) -> bool {
    matches!(phase, Phase::Closed | Phase::Final) || opened.is_some()
}

// — The documents —

/// A leaderboard line as `/board` shows it (and `/api/board`, `board.json`, `board.csv`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardEntry {
    /// The rank (equal share and tie-break round: equal place).
    pub place: usize,
    pub submission: i64,
    /// The agent's name as the board shows it (`AGENT_NAME`, or the file's stem).
    pub agent: String,
    /// The file's `AGENT_VERSION` (the board's version column; empty when it gives none).
    pub version: String,
    /// Percent of the map.
    pub share: f64,
    pub tiebreak: Option<i64>,
    pub violations: i64,
    pub cells: i64,
    pub rounds: i64,
    pub council_fell: Option<i64>,
    /// A newer upload of the participant is being judged: this result stands until it is.
    pub being_judged: bool,
    /// The replay's page.
    pub replay: String,
}

/// A flash victory as `/board` shows it: the Council eliminated, the lowest round first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlashEntry {
    pub place: usize,
    pub submission: i64,
    pub agent: String,
    /// The round in which the Council lost its last cell.
    pub round: i64,
    /// When it was uploaded (RFC 3339).
    pub uploaded: String,
    pub replay: String,
}

/// The leaderboard and the flash victories.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardDoc {
    pub competition: String,
    pub rows: Vec<BoardEntry>,
    pub flash: Vec<FlashEntry>,
}

fn rfc3339(unix: i64) -> String {
    Timestamp::from_second(unix).map(|t| t.to_string()).unwrap_or_default()
}

/// The board's document from the store's rows (what [`super::pages::board`] renders).
pub fn board_doc(competition: &str, rows: &[BoardRow], flash: &[(Submission, Outcome)]) -> BoardDoc {
    BoardDoc {
        competition: competition.to_string(),
        rows: rows
            .iter()
            .map(|r| BoardEntry {
                place: r.rank,
                submission: r.submission.id,
                agent: r.submission.name_alone().to_string(),
                version: r.submission.version.clone(),
                share: r.outcome.share.unwrap_or_default(),
                tiebreak: r.outcome.tiebreak,
                violations: r.outcome.violations,
                cells: r.outcome.cells,
                rounds: r.outcome.rounds,
                council_fell: r.outcome.council_fell,
                being_judged: r.pending,
                replay: format!("/replay/{}", r.submission.id),
            })
            .collect(),
        flash: flash
            .iter()
            .enumerate()
            .map(|(k, (s, o))| FlashEntry {
                place: k + 1,
                submission: s.id,
                agent: s.agent_name.clone(),
                round: o.council_fell.unwrap_or_default(),
                uploaded: rfc3339(s.uploaded),
                replay: format!("/replay/{}", s.id),
            })
            .collect(),
    }
}

/// A finalist's line of the final's results (as `/final` shows it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalEntry {
    /// `None`: disqualified.
    pub place: Option<u64>,
    pub seat: u8,
    pub agent: String,
    pub share: Option<f64>,
    pub cells: u32,
    pub tiebreak: Option<u32>,
    pub violations: u32,
    pub disqualified: bool,
}

/// The final's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalDoc {
    pub competition: String,
    /// The final's run.
    pub final_id: i64,
    pub rows: Vec<FinalEntry>,
    pub council_fell: Option<u32>,
    pub rounds: u32,
}

/// The results table as the final stored it (`play_final`).
#[derive(Deserialize)]
struct StoredFinal {
    table: Vec<StoredFinalRow>,
    council_fell: Option<u32>,
    rounds: u32,
}

#[derive(Deserialize)]
struct StoredFinalRow {
    rank: Option<u64>,
    name: String,
    seat: u8,
    share: Option<f64>,
    cells: u32,
    tiebreak: Option<u32>,
    violations: u32,
    disqualified: bool,
}

/// The final's results, once a final has been played to its end.
pub fn final_doc(competition: &str, fin: &FinalRecord) -> Option<FinalDoc> {
    if fin.state != FinalState::Finished {
        return None;
    }
    let stored: StoredFinal = serde_json::from_str(&fin.result).ok()?;
    Some(FinalDoc {
        competition: competition.to_string(),
        final_id: fin.id,
        rows: stored
            .table
            .into_iter()
            .map(|r| FinalEntry {
                place: r.rank,
                seat: r.seat,
                agent: r.name,
                share: r.share,
                cells: r.cells,
                tiebreak: r.tiebreak,
                violations: r.violations,
                disqualified: r.disqualified,
            })
            .collect(),
        council_fell: stored.council_fell,
        rounds: stored.rounds,
    })
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or begins or
/// ends with a space, its quotes doubled.
pub fn csv_field(field: &str) -> String {
    let quote = field.contains([',', '"', '\n', '\r']) || field.starts_with(' ') || field.ends_with(' ');
    if quote {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// CSV lines (RFC 4180: CRLF after each, the header first).
pub fn csv(header: &[&str], rows: &[Vec<String>]) -> String {
    let line = |fields: &mut dyn Iterator<Item = String>| fields.collect::<Vec<_>>().join(",") + "\r\n";
    let mut out = line(&mut header.iter().map(|h| csv_field(h)));
    for r in rows {
        out += &line(&mut r.iter().map(|f| csv_field(f)));
    }
    out
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// `board.csv`: the leaderboard's lines (the flash victories are in `board.json`).
pub fn board_csv(doc: &BoardDoc) -> String {
    let rows: Vec<Vec<String>> = doc
        .rows
        .iter()
        .map(|r| {
            vec![
                r.place.to_string(),
                r.submission.to_string(),
                r.agent.clone(),
                r.version.clone(),
                r.share.to_string(),
                opt(r.tiebreak),
                r.violations.to_string(),
                r.cells.to_string(),
                r.rounds.to_string(),
                opt(r.council_fell),
                r.being_judged.to_string(),
            ]
        })
        .collect();
    csv(
        &[
            "place",
            "submission",
            "agent",
            "version",
            "share",
            "tiebreak",
            "violations",
            "cells",
            "rounds",
            "council_fell",
            "being_judged",
        ],
        &rows,
    )
}

/// `final.csv`: the final's places.
pub fn final_csv(doc: &FinalDoc) -> String {
    let rows: Vec<Vec<String>> = doc
        .rows
        .iter()
        .map(|r| {
            vec![
                opt(r.place),
                r.seat.to_string(),
                r.agent.clone(),
                opt(r.share),
                r.cells.to_string(),
                opt(r.tiebreak),
                r.violations.to_string(),
                r.disqualified.to_string(),
            ]
        })
        .collect();
    csv(&["place", "seat", "agent", "share", "cells", "tiebreak", "violations", "disqualified"], &rows)
}

/// A replay to publish: where it is in the data folder and what the manifest says of it (its
/// `file` filled in once read).
#[derive(Clone, Debug)]
pub struct Published {
    pub source: PathBuf,
    pub entry: ManifestReplay,
}

/// The replays the results rest on: each leaderboard line's (seat 0, the participant's agent,
/// with the figures the board shows), each flash victory's not already among them, and the
/// final's (every finalist's seat with its figures of the results table). Paths in the archive:
/// `replays/leaderboard-SUBMISSION.json.gz`, `replays/final-RUN.json.gz`.
pub fn published_replays(
    data: &std::path::Path,
    rows: &[BoardRow],
    flash: &[(Submission, Outcome)],
    fin: Option<(&FinalRecord, &FinalDoc)>,
) -> Vec<Published> {
    let mut out: Vec<Published> = Vec::new();
    let side = |s: &Submission, o: &Outcome| PublishedSide {
        seat: 0,
        name: s.agent_name.clone(),
        share: o.share,
        cells: o.cells as u32,
        tiebreak: o.tiebreak.map(|t| t as u32),
        violations: o.violations as u32,
    };
    let leaderboard = |s: &Submission, o: &Outcome| Published {
        source: data.join(&o.replay),
        entry: ManifestReplay {
            file: ManifestFile {
                path: format!("replays/leaderboard-{}.json.gz", s.id),
                sha256: String::new(),
                bytes: 0,
            },
            kind: "leaderboard".into(),
            submission: Some(s.id),
            name: s.agent_name.clone(),
            place: None,
            flash: None,
            sides: vec![side(s, o)],
        },
    };
    for r in rows.iter().filter(|r| !r.outcome.replay.is_empty()) {
        let mut p = leaderboard(&r.submission, &r.outcome);
        p.entry.place = Some(r.rank as u64);
        out.push(p);
    }
    for (k, (s, o)) in flash.iter().enumerate().filter(|(_, (_, o))| !o.replay.is_empty()) {
        match out.iter_mut().find(|p| p.entry.submission == Some(s.id)) {
            Some(p) => p.entry.flash = Some(k as u64 + 1),
            None => {
                let mut p = leaderboard(s, o);
                p.entry.flash = Some(k as u64 + 1);
                out.push(p);
            }
        }
    }
    if let Some((f, doc)) = fin.filter(|(f, _)| !f.replay.is_empty()) {
        out.push(Published {
            source: data.join(&f.replay),
            entry: ManifestReplay {
                file: ManifestFile { path: format!("replays/final-{}.json.gz", f.id), sha256: String::new(), bytes: 0 },
                kind: "final".into(),
                submission: None,
                name: "the final".into(),
                place: None,
                flash: None,
                sides: doc
                    .rows
                    .iter()
                    .map(|r| PublishedSide {
                        seat: r.seat,
                        name: r.agent.clone(),
                        share: r.share,
                        cells: r.cells,
                        tiebreak: r.tiebreak,
                        violations: r.violations,
                    })
                    .collect(),
            },
        });
    }
    out
}

/// How to check the archive, in its own folder.
const README: &str = "\
These are the published results of a Gbely competition (gbely arena's public export).

  manifest.json   every file and replay of this folder with its SHA-256 and size, and for each
                  replay the figures published for its seats
  board.csv/json  the leaderboard (board.json also holds the flash victories)
  final.csv/json  the final's results (once the final has been played)
  replays/        every leaderboard, flash-victory and final replay

To check every published result yourself, with the gbely command line:

  gbely replay verify manifest.json

It checks each file's SHA-256 and size against the manifest, re-simulates each replay from the
agents' recorded commands (every round's changes, the final state and the result must come out
as recorded) and compares the published share, cells, tie-break round and violations with each
replay's result; one line per replay, then a summary; exit code 0 when all match, 5 when any
does not. One replay at a time: gbely replay verify replays/leaderboard-12.json.gz
The SHA-256 alone: sha256sum replays/* and compare with manifest.json.
";

/// Everything the public results publish, made once per change of the database.
#[derive(Debug)]
pub struct Export {
    pub board_json: String,
    pub board_csv: String,
    /// `None` until a final has been played to its end.
    pub final_json: Option<String>,
    pub final_csv: Option<String>,
    pub manifest_json: String,
    /// How many replays the manifest names.
    pub replays: usize,
    /// The whole archive (.tar.gz).
    pub archive: Vec<u8>,
}

/// The last [`Export`], with the database's change counter it was made at.
#[derive(Debug, Default)]
pub struct Cache(Mutex<Option<(i64, Arc<Export>)>>);

fn pretty<T: Serialize>(doc: &T) -> String {
    serde_json::to_string_pretty(doc).expect("plain data") + "\n"
}

/// Makes the export: the documents, the manifest and the archive. Reads (and hashes) every
/// published replay: blocking.
pub fn make(
    competition: &str,
    generated: Timestamp,
    board: &BoardDoc,
    fin: Option<&FinalDoc>,
    replays: &[Published],
) -> Result<Export, String> {
    let board_json = pretty(board);
    let board_csv = board_csv(board);
    let final_json = fin.map(pretty);
    let final_csv = fin.map(final_csv);
    let mut documents: Vec<(&str, &str)> =
        vec![("README.txt", README), ("board.csv", &board_csv), ("board.json", &board_json)];
    if let (Some(j), Some(c)) = (&final_json, &final_csv) {
        documents.extend([("final.csv", c.as_str()), ("final.json", j.as_str())]);
    }
    let files: Vec<ManifestFile> = documents
        .iter()
        .map(|(path, text)| ManifestFile {
            path: path.to_string(),
            sha256: sha256_hex(text.as_bytes()),
            bytes: text.len() as u64,
        })
        .collect();
    let mut entries = Vec::with_capacity(replays.len());
    let mut contents = Vec::with_capacity(replays.len());
    for p in replays {
        let bytes = std::fs::read(&p.source).map_err(|e| format!("the replay {}: {e}", p.source.display()))?;
        let mut entry = p.entry.clone();
        entry.file.sha256 = sha256_hex(&bytes);
        entry.file.bytes = bytes.len() as u64;
        contents.push((entry.file.path.clone(), bytes));
        entries.push(entry);
    }
    let manifest = ResultsManifest {
        format: MANIFEST_FORMAT.into(),
        version: MANIFEST_VERSION,
        competition: competition.to_string(),
        generated: generated.to_string(),
        files,
        replays: entries,
    };
    let manifest_json = pretty(&manifest);
    let mut all: Vec<(String, &[u8])> = vec![("manifest.json".into(), manifest_json.as_bytes())];
    all.extend(documents.iter().map(|(p, t)| (p.to_string(), t.as_bytes())));
    all.extend(contents.iter().map(|(p, b)| (p.clone(), b.as_slice())));
    let archive = tar_gz(&all, generated.as_second().max(0) as u64).map_err(|e| format!("the archive: {e}"))?;
    Ok(Export { board_json, board_csv, final_json, final_csv, manifest_json, replays: replays.len(), archive })
}

/// A .tar.gz of `files` under the folder [`FOLDER`], every entry a plain file of mode 0644.
fn tar_gz(files: &[(String, &[u8])], mtime: u64) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, bytes) in files {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(mtime);
        h.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut h, format!("{FOLDER}/{path}"), *bytes)?;
    }
    tar.into_inner()?.finish()
}

impl Arena {
    /// When the public results open (`None`: they are open).
    async fn export_closed(&self, l: Lang) -> Result<Option<String>, sqlx::Error> {
        let opened = self.store.export_opened().await?;
        if is_open(self.phase(), opened) {
            return Ok(None);
        }
        Ok(Some(self.config.local_in(self.config.schedule.deadline, l)))
    }

    /// The export as the database stands (made again only after a change).
    async fn export(self: &Arc<Self>) -> Result<Arc<Export>, String> {
        let version = self.store.version().await.map_err(|e| e.to_string())?;
        if let Some((v, e)) = self.export.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if *v == version {
                return Ok(Arc::clone(e));
            }
        }
        let standings = self.standings().await.map_err(|e| e.to_string())?;
        let (rows, flash) = (&*standings.board, &*standings.flash);
        let fin = self.store.last_final().await.map_err(|e| e.to_string())?;
        let name = self.config.name.clone();
        let board = board_doc(&name, rows, flash);
        let final_ = fin.as_ref().and_then(|f| final_doc(&name, f).map(|d| (f.clone(), d)));
        let replays = published_replays(&self.config.data, rows, flash, final_.as_ref().map(|(f, d)| (f, d)));
        let now = self.now();
        let made =
            tokio::task::spawn_blocking(move || make(&name, now, &board, final_.as_ref().map(|(_, d)| d), &replays))
                .await
                .map_err(|e| e.to_string())??;
        let made = Arc::new(made);
        *self.export.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((version, Arc::clone(&made)));
        Ok(made)
    }

    fn export_refusal(&self, ui: &Ui, user: Option<&User>, opens: &str) -> Response {
        let l = ui.lang;
        let body = html! {
            h1 { (tr!(l, "export-title")) }
            p #export-closed .refused { (tr!(l, "export-closed", opens = opens)) }
        };
        let mut r = self.page(ui, user, &tr!(l, "export-title"), body);
        *r.status_mut() = StatusCode::FORBIDDEN;
        r
    }
}

/// `/export`: what is published and how to check it.
pub(crate) async fn page(axum::extract::State(a): Shared, ui: Ui, headers: HeaderMap) -> Response {
    let user = a.user(&headers).await;
    let l = ui.lang;
    match a.export_closed(l).await {
        Ok(Some(opens)) => return a.export_refusal(&ui, user.as_ref(), &opens),
        Ok(None) => {}
        Err(e) => return a.internal(&ui, user.as_ref(), |l| tr!(l, "doing-export-state"), &e),
    }
    let export = match a.export().await {
        Ok(e) => e,
        Err(e) => return a.internal(&ui, user.as_ref(), |l| tr!(l, "doing-export"), &e),
    };
    let body = html! {
        h1 { (tr!(l, "export-title")) }
        p { (tr!(l, "export-intro")) }
        h2 { (tr!(l, "export-downloads")) }
        ul #export-files {
            li {
                a href={ "/export/" (ARCHIVE) } download { (ARCHIVE) }
                " " (tr!(l, "export-archive", bytes = export.archive.len()))
            }
            li {
                a href="/export/board.csv" { "board.csv" } " · " a href="/export/board.json" { "board.json" }
                ": " (tr!(l, "export-board"))
            }
            @if export.final_json.is_some() {
                li {
                    a href="/export/final.csv" { "final.csv" } " · " a href="/export/final.json" { "final.json" }
                    ": " (tr!(l, "export-final"))
                }
            } @else {
                li.muted { (tr!(l, "export-final-later")) }
            }
            li { a href="/export/manifest.json" { "manifest.json" } ": " (tr!(l, "export-manifest", replays = export.replays)) }
        }
        h2 { (tr!(l, "export-check-title")) }
        p { (tr!(l, "export-check-how")) }
        pre { "tar xzf " (ARCHIVE) "\ncd " (FOLDER) "\ngbely replay verify manifest.json" }
        p { (tr!(l, "export-check-what")) }
        p.muted { (tr!(l, "export-api")) }
    };
    a.page(&ui, user.as_ref(), &tr!(l, "export-title"), body)
}

/// `/export/NAME`: one published document, or the archive.
pub(crate) async fn file(
    axum::extract::State(a): Shared,
    ui: Ui,
    headers: HeaderMap,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let user = a.user(&headers).await;
    match a.export_closed(ui.lang).await {
        Ok(Some(opens)) => return a.export_refusal(&ui, user.as_ref(), &opens),
        Ok(None) => {}
        Err(e) => return a.internal(&ui, user.as_ref(), |l| tr!(l, "doing-export-state"), &e),
    }
    let export = match a.export().await {
        Ok(e) => e,
        Err(e) => return a.internal(&ui, user.as_ref(), |l| tr!(l, "doing-export"), &e),
    };
    let doc = |kind: &'static str, body: &str| {
        (StatusCode::OK, [(header::CONTENT_TYPE, kind)], body.to_string()).into_response()
    };
    const CSV: &str = "text/csv; charset=utf-8";
    const JSON: &str = "application/json";
    let no_final = || a.refuse(&ui, user.as_ref(), StatusCode::NOT_FOUND, &tr!(ui.lang, "export-no-final"));
    match name.as_str() {
        "board.csv" => doc(CSV, &export.board_csv),
        "board.json" => doc(JSON, &export.board_json),
        "manifest.json" => doc(JSON, &export.manifest_json),
        "final.csv" => export.final_csv.as_deref().map_or_else(no_final, |c| doc(CSV, c)),
        "final.json" => export.final_json.as_deref().map_or_else(no_final, |j| doc(JSON, j)),
        ARCHIVE => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/gzip".to_string()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{ARCHIVE}\"")),
            ],
            export.archive.clone(),
        )
            .into_response(),
        _ => a.refuse(&ui, user.as_ref(), StatusCode::NOT_FOUND, &tr!(ui.lang, "export-no-file")),
    }
}

/// `/org/export` (an organiser's form): opens the public results before the deadline.
pub(crate) async fn open(
    axum::extract::State(a): Shared,
    ui: Ui,
    OrganiserForm(user, _): OrganiserForm<CsrfForm>,
) -> Response {
    match a.store.open_export(super::judge::unix_now()).await {
        Ok(true) => a.audit(&user, crate::audit::Act::OpenResults).await,
        Ok(false) => {}
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-export-open"), &e),
    }
    super::redirect("/export")
}

/// The organisers' page's section on the public results: whether they are open, and the button
/// that opens them before the deadline.
pub(crate) async fn org_section(a: &Arena, l: Lang, user: &User) -> Markup {
    let opened = a.store.export_opened().await.ok().flatten();
    let deadline = a.config.local_in(a.config.schedule.deadline, l);
    let state = match opened {
        Some(at) => {
            tr!(l, "export-open-since", at = a.config.local_in(Timestamp::from_second(at).unwrap_or_default(), l))
        }
        None if is_open(a.phase(), None) => tr!(l, "export-open-deadline", deadline = deadline.clone()),
        None => tr!(l, "export-state-closed", deadline = deadline.clone()),
    };
    html! {
        h2 #export { (tr!(l, "export-title")) }
        p #export-state { (state) }
        @if is_open(a.phase(), opened) {
            p { a href="/export" { (tr!(l, "export-title")) } }
        } @else {
            form method="post" action="/org/export" {
                input type="hidden" name="csrf" value=(user.csrf);
                button #open-export { (tr!(l, "export-open-now")) }
                " " span.muted { (tr!(l, "export-open-note")) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_field("Ana 1"), "Ana 1");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("cr\rhere"), "\"cr\rhere\"");
        assert_eq!(csv_field(" padded"), "\" padded\"");
        assert_eq!(csv(&["a", "b"], &[vec!["1".into(), "x,y".into()]]), "a,b\r\n1,\"x,y\"\r\n");
    }

    fn entry(place: usize, submission: i64, agent: &str, share: f64, tiebreak: Option<i64>) -> BoardEntry {
        BoardEntry {
            place,
            submission,
            agent: agent.into(),
            version: "v1".into(),
            share,
            tiebreak,
            violations: 0,
            cells: 0,
            rounds: 40,
            council_fell: None,
            being_judged: false,
            replay: format!("/replay/{submission}"),
        }
    }

    #[test]
    fn the_board_as_csv_keeps_names_with_commas_and_quotes_whole() {
        let doc = BoardDoc {
            competition: "Cup".into(),
            rows: vec![entry(1, 7, "Ana, \"the\" best", 12.5, Some(30)), entry(2, 3, "Bo", 2.0, None)],
            flash: vec![],
        };
        assert_eq!(
            board_csv(&doc),
            "place,submission,agent,version,share,tiebreak,violations,cells,rounds,council_fell,being_judged\r\n\
             1,7,\"Ana, \"\"the\"\" best\",v1,12.5,30,0,0,40,,false\r\n\
             2,3,Bo,v1,2,,0,0,40,,false\r\n"
        );
    }

    #[test]
    fn the_results_open_at_the_deadline_or_when_an_organiser_opens_them() {
        for (phase, opened, open) in [
            (Phase::BeforeRegistration, None, false),
            (Phase::Registration, None, false),
            (Phase::Testing, None, false),
            (Phase::Testing, Some(1_700_000_000), true),
            (Phase::Closed, None, true),
            (Phase::Final, None, true),
        ] {
            assert_eq!(is_open(phase, opened), open, "{phase:?} {opened:?}");
        }
    }

    fn sub(id: i64, agent: &str) -> Submission {
        Submission {
            id,
            email: format!("{agent}@mail.example"),
            uploaded: 1_793_000_000 + id,
            file_name: "a.py".into(),
            bytes: 1,
            version: "v".into(),
            agent_name: agent.into(),
            state: crate::store::SubmissionState::Scored,
            reason: String::new(),
            check: String::new(),
            stored: String::new(),
        }
    }

    fn outcome(submission: i64, share: f64, council_fell: Option<i64>) -> Outcome {
        Outcome {
            submission,
            share: Some(share),
            cells: (share * 36.0) as i64,
            tiebreak: Some(20),
            violations: 1,
            disqualified: None,
            council_fell,
            rounds: 40,
            replay: format!("judging/{submission}/replay.json.gz"),
            log: String::new(),
            judged: 0,
            times: Default::default(),
        }
    }

    /// Two board lines, a flash victory of the first line's upload and one of an older upload of
    /// another participant, and a finished final of two finalists: four replays, each once (the
    /// board's flash victory is marked on its board entry), the board's in board order, then
    /// the flash-only one, then the final with both finalists' published figures.
    #[test]
    fn every_board_flash_and_final_replay_is_published_once_with_its_figures() {
        let rows = vec![
            BoardRow { rank: 1, submission: sub(5, "Ana"), outcome: outcome(5, 20.0, Some(33)), pending: false },
            BoardRow { rank: 2, submission: sub(4, "Bo"), outcome: outcome(4, 10.0, None), pending: true },
        ];
        let flash = vec![(sub(5, "Ana"), outcome(5, 20.0, Some(33))), (sub(2, "Cy"), outcome(2, 1.0, Some(39)))];
        let fin = FinalRecord {
            id: 3,
            state: FinalState::Finished,
            started: 0,
            result: r#"{"table": [
                {"rank": 1, "name": "Bo", "seat": 1, "share": 9.5, "cells": 80, "tiebreak": 12, "violations": 0, "disqualified": false},
                {"rank": null, "name": "Ana", "seat": 0, "share": null, "cells": 3, "tiebreak": null, "violations": 4, "disqualified": true}
            ], "council_fell": null, "rounds": 30}"#
                .into(),
            replay: "finals/3/replay.json.gz".into(),
            seating: String::new(),
        };
        let doc = final_doc("Cup", &fin).expect("a finished final");
        assert_eq!(doc.rows[1].place, None);
        let data = std::path::Path::new("/data");
        let p = published_replays(data, &rows, &flash, Some((&fin, &doc)));
        let paths: Vec<&str> = p.iter().map(|p| p.entry.file.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "replays/leaderboard-5.json.gz",
                "replays/leaderboard-4.json.gz",
                "replays/leaderboard-2.json.gz",
                "replays/final-3.json.gz"
            ]
        );
        let marks: Vec<(Option<u64>, Option<u64>)> = p.iter().map(|p| (p.entry.place, p.entry.flash)).collect();
        assert_eq!(marks, [(Some(1), Some(1)), (Some(2), None), (None, Some(2)), (None, None)]);
        assert_eq!(p[0].source, data.join("judging/5/replay.json.gz"));
        assert_eq!(p[3].source, data.join("finals/3/replay.json.gz"));
        assert_eq!(
            p[1].entry.sides,
            [PublishedSide {
                seat: 0,
                name: "Bo".into(),
                share: Some(10.0),
                cells: 360,
                tiebreak: Some(20),
                violations: 1
            }]
        );
        assert_eq!(
            p[3].entry.sides,
            [
                PublishedSide {
                    seat: 1,
                    name: "Bo".into(),
                    share: Some(9.5),
                    cells: 80,
                    tiebreak: Some(12),
                    violations: 0
                },
                PublishedSide { seat: 0, name: "Ana".into(), share: None, cells: 3, tiebreak: None, violations: 4 },
            ]
        );
        assert_eq!(
            final_csv(&doc),
            "place,seat,agent,share,cells,tiebreak,violations,disqualified\r\n\
             1,1,Bo,9.5,80,12,0,false\r\n\
             ,0,Ana,,3,,4,true\r\n"
        );
        // No address anywhere in what is published of them.
        let board = board_doc("Cup", &rows, &flash);
        let all = format!("{}{}{:?}", pretty(&board), pretty(&doc), p.iter().map(|p| &p.entry).collect::<Vec<_>>());
        assert!(!all.contains("mail.example"), "{all}");
        // A final still being played publishes nothing.
        let running = FinalRecord { state: FinalState::Running, ..fin };
        assert!(final_doc("Cup", &running).is_none());
    }

    /// The manifest names each replay with the SHA-256 and size of its bytes (`printf abc |
    /// sha256sum`), what it is and the figures published for it; the archive holds the
    /// manifest, the documents and the replays under one folder.
    #[test]
    fn the_manifest_names_every_replay_with_its_sha256_and_the_archive_holds_them() {
        let dir = std::env::temp_dir().join(format!("gbely-export-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("r7.json.gz"), "abc").unwrap();
        let published = vec![Published {
            source: dir.join("r7.json.gz"),
            entry: ManifestReplay {
                file: ManifestFile { path: "replays/leaderboard-7.json.gz".into(), sha256: String::new(), bytes: 0 },
                kind: "leaderboard".into(),
                submission: Some(7),
                name: "Ana 1".into(),
                place: Some(1),
                flash: None,
                sides: vec![PublishedSide {
                    seat: 0,
                    name: "Ana 1".into(),
                    share: Some(12.5),
                    cells: 450,
                    tiebreak: Some(30),
                    violations: 0,
                }],
            },
        }];
        let doc =
            BoardDoc { competition: "Cup".into(), rows: vec![entry(1, 7, "Ana 1", 12.5, Some(30))], flash: vec![] };
        let at: Timestamp = "2026-11-16T08:00:00Z".parse().unwrap();
        let e = make("Cup", at, &doc, None, &published).unwrap();
        let m: ResultsManifest = serde_json::from_str(&e.manifest_json).unwrap();
        assert_eq!((m.format.as_str(), m.version, m.competition.as_str()), ("gbely-results", 1, "Cup"));
        assert_eq!(m.generated, "2026-11-16T08:00:00Z");
        assert_eq!(m.replays.len(), 1);
        let r = &m.replays[0];
        assert_eq!(r.file.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(r.file.bytes, 3);
        assert_eq!(
            (r.kind.as_str(), r.submission, r.place, r.name.as_str()),
            ("leaderboard", Some(7), Some(1), "Ana 1")
        );
        assert_eq!(r.sides[0].share, Some(12.5));
        // No final yet: its documents are not there.
        let paths: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["README.txt", "board.csv", "board.json"]);
        let csv = m.files.iter().find(|f| f.path == "board.csv").unwrap();
        assert_eq!(csv.bytes as usize, e.board_csv.len());
        assert_eq!(csv.sha256, sha256_hex(e.board_csv.as_bytes()));
        assert!(e.final_json.is_none() && e.final_csv.is_none());

        let mut names = Vec::new();
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(e.archive.as_slice()));
        for f in tar.entries().unwrap() {
            let mut f = f.unwrap();
            let name = f.path().unwrap().display().to_string();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
            if name.ends_with("leaderboard-7.json.gz") {
                assert_eq!(bytes, b"abc");
            }
            if name.ends_with("manifest.json") {
                assert_eq!(bytes, e.manifest_json.as_bytes());
            }
            names.push(name);
        }
        assert_eq!(
            names,
            [
                "gbely-results/manifest.json",
                "gbely-results/README.txt",
                "gbely-results/board.csv",
                "gbely-results/board.json",
                "gbely-results/replays/leaderboard-7.json.gz",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
