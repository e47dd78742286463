//! The read-only JSON API, for tools and notebooks: what the pages show, as data. `GET` only.
//!
//! * `/api/board`: the leaderboard and the flash victories, as `/board` shows them (public).
//! * `/api/me/submissions`: the signed-in participant's own submissions, newest first, each with
//!   its state and result (as `/me` shows them); `/api/me/submissions/{id}` one of them;
//!   `/api/me/submissions/{id}/replay` its judged match's replay file (`.json.gz`).
//!
//! Signing in is the pages' session cookie. Errors are `{"error": "…"}` with their status: `401`
//! without a session, `404` for a submission that is not the participant's own (as for one that
//! does not exist: nobody learns which numbers are someone else's).

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::export::{board_doc, BoardDoc};
use super::store::{Outcome, Submission, SubmissionState};
use super::{own, Arena, Shared, User};

/// An error's body.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
}

pub(crate) fn error(status: StatusCode, why: impl Into<String>) -> Response {
    (status, Json(ApiError { error: why.into() })).into_response()
}

/// A failure of the server's own: logged, answered 500 without internals.
pub(crate) fn internal(doing: &str, e: &dyn std::fmt::Display) -> Response {
    eprintln!("gbely arena: the API, {doing}: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, format!("the server failed while {doing}; try again in a moment"))
}

/// A submission of one's own, as `/me` and its status page show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiSubmission {
    pub id: i64,
    /// When its file arrived (RFC 3339).
    pub uploaded: String,
    /// The file's name as uploaded.
    pub file_name: String,
    /// `AGENT_NAME` and `AGENT_VERSION` as the status page shows them (`Mravec 7`).
    pub agent: String,
    /// The file's `AGENT_VERSION` (empty when it gives none).
    pub version: String,
    pub bytes: i64,
    pub state: SubmissionState,
    /// Why it was refused or disqualified (empty otherwise).
    pub reason: String,
    /// The check's report (as `gbely check --json` writes it), once checked.
    pub check: Option<serde_json::Value>,
    /// Its judged match's result, once judged.
    pub result: Option<ApiResult>,
}

/// A judged match's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiResult {
    /// Percent of the map; `None`: disqualified.
    pub share: Option<f64>,
    pub cells: i64,
    pub tiebreak: Option<i64>,
    pub violations: i64,
    /// The round of the disqualification.
    pub disqualified: Option<i64>,
    pub council_fell: Option<i64>,
    pub rounds: i64,
    /// The answers' slowest rounds, `[round, milliseconds]`, slowest first.
    pub slowest: Vec<(u32, u32)>,
    /// The replay file (`/api/me/submissions/{id}/replay`).
    pub replay: Option<String>,
}

fn api_submission(s: &Submission, o: Option<&Outcome>) -> ApiSubmission {
    ApiSubmission {
        id: s.id,
        uploaded: jiff::Timestamp::from_second(s.uploaded).map(|t| t.to_string()).unwrap_or_default(),
        file_name: s.file_name.clone(),
        agent: s.agent_name.clone(),
        version: s.version.clone(),
        bytes: s.bytes,
        state: s.state,
        reason: s.reason.clone(),
        check: serde_json::from_str(&s.check).ok(),
        result: o.map(|o| ApiResult {
            share: o.share,
            cells: o.cells,
            tiebreak: o.tiebreak,
            violations: o.violations,
            disqualified: o.disqualified,
            council_fell: o.council_fell,
            rounds: o.rounds,
            slowest: o.times.slowest.clone(),
            replay: (!o.replay.is_empty()).then(|| format!("/api/me/submissions/{}/replay", s.id)),
        }),
    }
}

/// `/api/board`.
pub(crate) async fn board(State(a): Shared) -> Response {
    let rows = match a.store.board().await {
        Ok(r) => r,
        Err(e) => return internal("reading the leaderboard", &e),
    };
    let flash = match a.store.flash().await {
        Ok(f) => f,
        Err(e) => return internal("reading the flash victories", &e),
    };
    let doc: BoardDoc = board_doc(&a.config.name, &rows, &flash);
    Json(doc).into_response()
}

async fn signed_in(a: &Arena, headers: &HeaderMap) -> Result<User, Response> {
    a.user(headers).await.ok_or_else(|| {
        error(StatusCode::UNAUTHORIZED, "not signed in: sign in on /signin and send the session's cookie")
    })
}

/// `/api/me/submissions`.
pub(crate) async fn submissions(State(a): Shared, headers: HeaderMap) -> Response {
    let user = match signed_in(&a, &headers).await {
        Ok(u) => u,
        Err(r) => return r,
    };
    let subs = match a.store.submissions_of(&user.email).await {
        Ok(s) => s,
        Err(e) => return internal("reading your submissions", &e),
    };
    let mut out = Vec::with_capacity(subs.len());
    for s in &subs {
        match a.store.outcome(s.id).await {
            Ok(o) => out.push(api_submission(s, o.as_ref())),
            Err(e) => return internal("reading a result", &e),
        }
    }
    Json(out).into_response()
}

/// The signed-in participant's submission `id` with its result, or the error to answer.
async fn own_with_outcome(a: &Arena, headers: &HeaderMap, id: i64) -> Result<(Submission, Option<Outcome>), Response> {
    let user = signed_in(a, headers).await?;
    let Some(sub) = own(a, &user, id).await else {
        return Err(error(StatusCode::NOT_FOUND, "no submission of yours has this number"));
    };
    let outcome = a.store.outcome(id).await.map_err(|e| internal("reading the result", &e))?;
    Ok((sub, outcome))
}

/// `/api/me/submissions/{id}`.
pub(crate) async fn submission(State(a): Shared, headers: HeaderMap, UrlPath(id): UrlPath<i64>) -> Response {
    match own_with_outcome(&a, &headers, id).await {
        Ok((s, o)) => Json(api_submission(&s, o.as_ref())).into_response(),
        Err(r) => r,
    }
}

/// `/api/me/submissions/{id}/replay`: the replay file as the judge wrote it.
pub(crate) async fn replay(State(a): Shared, headers: HeaderMap, UrlPath(id): UrlPath<i64>) -> Response {
    let (_, outcome) = match own_with_outcome(&a, &headers, id).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let Some(path) = outcome.map(|o| o.replay).filter(|r| !r.is_empty()) else {
        return error(StatusCode::NOT_FOUND, "this submission has no replay (yet)");
    };
    match tokio::fs::read(a.config.data.join(path)).await {
        Ok(bytes) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/gzip".to_string()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"submission-{id}.json.gz\"")),
            ],
            bytes,
        )
            .into_response(),
        Err(e) => internal("reading the replay", &e),
    }
}

/// Any other method than `GET` (and `HEAD`): the API changes nothing.
pub(crate) async fn read_only() -> Response {
    error(StatusCode::METHOD_NOT_ALLOWED, "the API is read-only: GET only")
}

/// Any other `/api/` address.
pub(crate) async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such API address (see docs/arena.md: /api/board, /api/me/submissions)")
}
