//! Judges over HTTP: the server's side of `gbely arena worker --server URL` (the worker's side is
//! [`crate::remote`]). A worker holds neither the database nor the data folder, only a token an
//! organiser issued on `/org` (kept hashed, revocable). It asks for a job, downloads the
//! submission, renews the job's lease while it judges and sends back the replay, the agent's log
//! and the verdict; the server keeps them as its own judges' and ends the job in the same one
//! transaction. The queue's lease rules are the database judges': a job whose worker falls
//! silent is judged again by another, and only the attempt that holds a job can write anything
//! for it — a late worker's files and result are refused (`409`).
//!
//! All under `/worker/`, with `Authorization: Bearer TOKEN`; errors are `{"error": "…"}`:
//!
//! * `POST /worker/claim` (`{"host": "…"}`): `200` with the job ([`Claim`]), `204` when none waits.
//! * `GET /worker/jobs/{job}/{attempt}/file`: the submission's file.
//! * `POST /worker/jobs/{job}/{attempt}/heartbeat` (`{"state": "checking" | "running" | null}`):
//!   the lease renewed (and the submission's state shown to its participant).
//! * `PUT /worker/jobs/{job}/{attempt}/files/{name}`: `replay.json.gz`, `agent.log` or `check.log`.
//! * `POST /worker/jobs/{job}/{attempt}/result`: the verdict ([`Verdict`] in JSON: `{"judged": …}`,
//!   `{"check_failed": …}` or `{"error": {"reason": "…"}}`); `200`, or `409`
//!   when the job is no longer this attempt's (the result dropped).
//! * `POST /worker/jobs/{job}/{attempt}/release`: the job back to the queue (the worker stops).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path as UrlPath, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use maud::{html, Markup};
use serde::{Deserialize, Serialize};

use super::api::{error, internal};
use super::audit::Act;
use super::i18n::Lang;
use super::judge::{disqualification, submission_file, unix_now, Assignment, CHECK_LOG, REPLAY};
use super::speed::Speed;
use super::store::{Job, Outcome, Submission, SubmissionState, Verdict, Worker};
use super::{hashed, redirect, Arena, CsrfForm, OrganiserForm, Shared, Ui, User, WithCsrf};
use gbely_engine::app::runs::agent_spec::AgentSpec;

/// The agent's log of a judged match, as a worker sends it and the server keeps it.
pub const AGENT_LOG: &str = "agent.log";
/// The files a worker may send for a job, in the job's folder.
const FILES: [&str; 3] = [REPLAY, AGENT_LOG, CHECK_LOG];
/// The largest file a worker may send (a replay of 150 rounds is tens of KB, an agent's log is
/// capped by the engine).
const FILE_LIMIT: usize = 64 << 20;
/// A worker token's prefix (it says what the secret is where one turns up).
pub const TOKEN_PREFIX: &str = "gbw_";

/// A job as a worker receives it: what to play, and the leaderboard's map as a map file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Claim {
    pub assignment: Assignment,
    /// The leaderboard's map, in the map file format (`gbely_world::write_map_file`).
    pub map: String,
}

/// What a worker says when it asks for a job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClaimRequest {
    /// Its last measured speed ([`crate::speed::measure`]); a worker without one is given no
    /// job where the competition asks for a speed (`judge.min_speed`).
    #[serde(default)]
    pub speed: Option<Speed>,
}

/// The header a worker names its machine in (shown on `/org`).
pub const HOST_HEADER: &str = "x-gbely-worker-host";

/// A refusal for speed (`403`): the worker waits, measures itself again and asks again.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TooSlow {
    pub error: String,
    pub too_slow: bool,
}

/// A lease's renewal.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Where the judging is: `checking`, then `running` (shown to the participant).
    #[serde(default)]
    pub state: Option<SubmissionState>,
}

/// What the server did with a verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Received {
    /// Kept as the submission's result (`false`: the judge's own error, the job back in the
    /// queue for another judge).
    pub kept: bool,
}

/// A verdict is a few KB (the check's report); the files are sent apart.
const VERDICT_LIMIT: usize = 1 << 20;

pub(crate) fn routes() -> Router<Arc<Arena>> {
    Router::new()
        .route("/worker/claim", post(claim).layer(DefaultBodyLimit::max(64 * 1024)))
        .route("/worker/jobs/{job}/{attempt}/file", get(file))
        .route("/worker/jobs/{job}/{attempt}/heartbeat", post(heartbeat).layer(DefaultBodyLimit::max(64 * 1024)))
        .route("/worker/jobs/{job}/{attempt}/files/{name}", put(keep_file).layer(DefaultBodyLimit::max(FILE_LIMIT)))
        .route("/worker/jobs/{job}/{attempt}/result", post(result).layer(DefaultBodyLimit::max(VERDICT_LIMIT)))
        .route("/worker/jobs/{job}/{attempt}/release", post(release))
        .route("/org/workers", post(issue))
        .route("/org/workers/{id}/revoke", post(revoke))
        .route("/org/workers/{id}/rejudge", post(rejudge_timeouts))
}

/// The worker a request's token names: an extractor that runs before the request's body is
/// read, so that nobody without a valid token makes the server read one. `401` for no token,
/// an unknown one or a revoked one.
struct Authed(Worker);

impl FromRequestParts<Arc<Arena>> for Authed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, a: &Arc<Arena>) -> Result<Authed, Response> {
        let host: Option<String> = parts
            .headers
            .get(HOST_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|h| h.chars().filter(|c| !c.is_control()).take(80).collect());
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| t.starts_with(TOKEN_PREFIX));
        let Some(token) = token else {
            return Err(error(
                StatusCode::UNAUTHORIZED,
                "no worker token: send `Authorization: Bearer gbw_…` with a token issued on the organisers' page",
            ));
        };
        match a.store.worker_of_token(&hashed(token), unix_now(), host.as_deref()).await {
            Ok(Some(w)) if w.revoked.is_none() => Ok(Authed(w)),
            Ok(Some(w)) => Err(error(
                StatusCode::UNAUTHORIZED,
                format!("the token of worker `{}` was revoked by the organisers", w.name),
            )),
            Ok(None) => Err(error(StatusCode::UNAUTHORIZED, "unknown worker token: ask the organisers for one")),
            Err(e) => Err(internal("reading the workers", &e)),
        }
    }
}

/// The job of the path, while this worker's attempt holds it; `409` otherwise.
async fn held(a: &Arena, w: &Worker, job: i64, attempt: i64) -> Result<Job, Response> {
    match a.store.held(job, attempt, w.id).await {
        Ok(Some(job)) => Ok(job),
        Ok(None) => Err(not_held(job, attempt)),
        Err(e) => Err(internal("reading the job", &e)),
    }
}

fn not_held(job: i64, attempt: i64) -> Response {
    error(
        StatusCode::CONFLICT,
        format!(
            "job {job} attempt {attempt} is not this worker's any more (its lease lapsed and it is judged again, or \
             it was released or revoked): nothing is kept from it"
        ),
    )
}

async fn submission_of(a: &Arena, job: &Job) -> Result<Submission, Response> {
    match a.store.submission(job.submission).await {
        Ok(Some(s)) => Ok(s),
        Ok(None) => Err(internal("reading the job's submission", &"it is gone")),
        Err(e) => Err(internal("reading the job's submission", &e)),
    }
}

async fn claim(State(a): Shared, Authed(w): Authed, body: Option<Json<ClaimRequest>>) -> Response {
    let ClaimRequest { speed } = body.map(|Json(b)| b).unwrap_or_default();
    if a.closing.load(Ordering::Relaxed) {
        return error(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping: ask again later");
    }
    if let Some(refused) = a.too_slow(&w, speed.filter(Speed::is_plausible)).await {
        return refused;
    }
    // A worker plays the opponent itself: one gbely carries (not a program of the server's).
    // The organisers' to mend: the worker asks again later.
    let opponent = &a.config.leaderboard.opponent;
    if AgentSpec::carried(&opponent.to_string()).is_none() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the leaderboard's opponent `{opponent}` is a program on the server's machine, which a worker over \
                 HTTP cannot run: judge with `gbely arena worker CONFIG` beside the server, or name a built-in opponent"
            ),
        );
    }
    // Made once, before a job is taken: a map that cannot be made holds no job.
    let arena = Arc::clone(&a);
    let map = match tokio::task::spawn_blocking(move || arena.judging.leaderboard_map()).await {
        Ok(Ok((_, file))) => file,
        Ok(Err(e)) => return internal("making the leaderboard's map", &e),
        Err(e) => return internal("making the leaderboard's map", &e),
    };
    let lease = a.config.judge.lease_seconds as i64;
    let name = format!("{}:http:{}", w.name, w.host);
    let job = match a.store.claim(&name, w.id, unix_now(), lease).await {
        Ok(Some(job)) => job,
        Ok(None) => return StatusCode::NO_CONTENT.into_response(),
        Err(e) => return internal("taking a job from the queue", &e),
    };
    let sub = match submission_of(&a, &job).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    Json(Claim { assignment: Assignment::new(&a.config, &job, &sub), map: map.to_string() }).into_response()
}

impl Arena {
    /// Records a worker's speed; a refusal when it is slower than `judge.min_speed` of the
    /// server's own (or sends none while a speed is asked for).
    async fn too_slow(&self, w: &Worker, speed: Option<Speed>) -> Option<Response> {
        let reference = match self.reference.get() {
            Some(Ok(r)) => Some(*r),
            Some(Err(e)) => {
                eprintln!(
                    "gbely arena: the server's own speed could not be measured, no worker is refused for speed: {e}"
                );
                None
            }
            None => None,
        };
        let share = match (speed, reference) {
            (Some(s), Some(r)) => {
                let share = s.share_of(&r);
                let newer = w.speed.as_ref().is_none_or(|(old, _, _)| *old != s);
                if newer {
                    if let Err(e) = self.store.set_worker_speed(w.id, &s, share, unix_now()).await {
                        return Some(internal("recording the worker's speed", &e));
                    }
                }
                Some((s, r, share))
            }
            _ => None,
        };
        let min = self.config.judge.min_speed;
        if min <= 0.0 {
            return None;
        }
        let slow = |why: String| (StatusCode::FORBIDDEN, Json(TooSlow { error: why, too_slow: true })).into_response();
        match (share, speed, self.reference.get()) {
            // Still measuring the reference (the server's first seconds): ask again soon.
            (_, _, None) => Some(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is measuring its own speed, the workers' reference: ask again in a moment",
            )),
            (_, _, Some(Err(_))) => None,
            (_, None, Some(Ok(_))) => Some(error(
                StatusCode::FORBIDDEN,
                format!(
                    "this competition gives jobs to workers that send their speed (at least {min} of the server's)"
                ),
            )),
            (Some((s, r, share)), _, _) if share < min => Some(slow(format!(
                "worker `{}` is too slow for this competition: it measured {share:.2} of the server's speed (engine \
                 {:.0} ms against {:.0} ms, Python {:.0} ms against {:.0} ms); it asks for at least {min}, so that \
                 no agent times out for the judge's slowness",
                w.name, s.engine_ms, r.engine_ms, s.python_ms, r.python_ms
            ))),
            _ => None,
        }
    }
}

async fn file(State(a): Shared, Authed(w): Authed, UrlPath((job, attempt)): UrlPath<(i64, i64)>) -> Response {
    let job = match held(&a, &w, job, attempt).await {
        Ok(j) => j,
        Err(r) => return r,
    };
    let sub = match submission_of(&a, &job).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    match tokio::fs::read(submission_file(&a.config.data, &sub)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/x-python; charset=utf-8")], bytes).into_response(),
        Err(e) => internal("reading the submission's file", &e),
    }
}

async fn heartbeat(
    State(a): Shared,
    Authed(w): Authed,
    UrlPath((job, attempt)): UrlPath<(i64, i64)>,
    body: Option<Json<Heartbeat>>,
) -> Response {
    let state = match body.and_then(|Json(b)| b.state) {
        Some(state @ (SubmissionState::Checking | SubmissionState::Running)) => Some(state),
        Some(other) => {
            return error(StatusCode::BAD_REQUEST, format!("a heartbeat says `checking` or `running`, not `{other}`"))
        }
        None => None,
    };
    let job = match held(&a, &w, job, attempt).await {
        Ok(j) => j,
        Err(r) => return r,
    };
    let until = unix_now() + a.config.judge.lease_seconds as i64;
    match a.store.renew(&job, until).await {
        Ok(true) => {}
        // Taken from it between the two reads.
        Ok(false) => return not_held(job.id, job.attempt),
        Err(e) => return internal("renewing the lease", &e),
    }
    if let Some(state) = state {
        if let Err(e) = a.store.set_state(job.submission, state).await {
            return internal("showing the submission's state", &e);
        }
    }
    Json(serde_json::json!({ "lease_until": until })).into_response()
}

async fn keep_file(
    State(a): Shared,
    Authed(w): Authed,
    UrlPath((job, attempt, name)): UrlPath<(i64, i64, String)>,
    body: Bytes,
) -> Response {
    if !FILES.contains(&name.as_str()) {
        return error(StatusCode::NOT_FOUND, format!("a worker sends {}, not `{name}`", FILES.join(", ")));
    }
    let job = match held(&a, &w, job, attempt).await {
        Ok(j) => j,
        Err(r) => return r,
    };
    let dir = a.config.data.join(job.folder());
    let (path, part) = (dir.join(&name), dir.join(format!(".{name}.part")));
    let written = async {
        tokio::fs::create_dir_all(&dir).await?;
        tokio::fs::write(&part, &body).await?;
        tokio::fs::rename(&part, &path).await
    };
    if let Err(e) = written.await {
        return internal("keeping the worker's file", &e);
    }
    // Taken from it while the file was written (its folder may be gone already): nothing stays.
    if let Err(r) = held(&a, &w, job.id, job.attempt).await {
        let _ = tokio::fs::remove_dir_all(&dir).await;
        return r;
    }
    StatusCode::NO_CONTENT.into_response()
}

/// Why a judged verdict is not kept.
enum Unkept {
    /// The verdict is not its replay's (the worker's fault: `422`).
    Mismatch(String),
    /// The server could not check it (its own fault: `500`).
    Server(String),
}

async fn result(
    State(a): Shared,
    Authed(w): Authed,
    UrlPath((job, attempt)): UrlPath<(i64, i64)>,
    Json(mut verdict): Json<Verdict>,
) -> Response {
    let job = match held(&a, &w, job, attempt).await {
        Ok(j) => j,
        Err(r) => return r,
    };
    let sub = match submission_of(&a, &job).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    // The judge's own error (no sandbox on its machine, no Python): not the submission's fault,
    // and not this judge's to end — the job goes back to the queue for another.
    if let Verdict::Error { reason } = &verdict {
        eprintln!("gbely arena: worker `{}` could not judge submission {}: {reason}", w.name, job.submission);
        return match a.store.release(&job).await {
            Ok(()) => Json(Received { kept: false }).into_response(),
            Err(e) => internal("giving the job back", &e),
        };
    }
    // The files are named by the server, as it kept them: never by what the worker says.
    let rel = job.folder();
    let kept = |name: &str| a.config.data.join(&rel).join(name).is_file().then(|| format!("{rel}/{name}"));
    let check_log = kept(CHECK_LOG);
    let with_log = |check: &mut String| {
        if let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(check) {
            if let Some(fields) = doc.as_object_mut() {
                match &check_log {
                    Some(log) => fields.insert("log".into(), log.as_str().into()),
                    None => fields.remove("log"),
                };
            }
            *check = doc.to_string();
        }
    };
    match &mut verdict {
        Verdict::Judged { outcome, check, reason } => {
            let Some(replay) = kept(REPLAY) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("a judged match comes with its replay: send {REPLAY} first"),
                );
            };
            outcome.submission = job.submission;
            outcome.replay = replay;
            outcome.log = kept(AGENT_LOG).unwrap_or_default();
            with_log(check);
            // The result is the replay's: re-simulated here before it is kept; the reason of a
            // disqualification is the server's words for the replay's fourth violation.
            let (arena, sub, claimed) = (Arc::clone(&a), sub.clone(), outcome.clone());
            let checked = tokio::task::spawn_blocking(move || replay_gives(&arena, &sub, &claimed))
                .await
                .unwrap_or_else(|e| Err(Unkept::Server(e.to_string())));
            match checked {
                Ok(why) => *reason = why,
                Err(Unkept::Mismatch(why)) => {
                    eprintln!("gbely arena: worker `{}`, submission {}: result refused: {why}", w.name, job.submission);
                    return error(StatusCode::UNPROCESSABLE_ENTITY, format!("the result is not its replay's: {why}"));
                }
                Err(Unkept::Server(why)) => return internal("checking the result's replay", &why),
            }
        }
        Verdict::CheckFailed { check, .. } => with_log(check),
        Verdict::Error { .. } => unreachable!("given back above"),
    }
    let judging = a.judging.clone();
    let who = w.name.clone();
    let concluded = tokio::task::spawn_blocking(move || judging.conclude(&job, &sub, &verdict)).await;
    match concluded {
        Ok(Ok(true)) => Json(Received { kept: true }).into_response(),
        Ok(Ok(false)) => error(
            StatusCode::CONFLICT,
            format!("worker `{who}`: the job was taken by another judge before this result came: it is dropped"),
        ),
        Ok(Err(e)) => internal("keeping the result", &e),
        Err(e) => internal("keeping the result", &e),
    }
}

/// Whether a worker's judged verdict is what its replay gives: the replay is a whole match of
/// the leaderboard's (its map, its rounds, the submission's agent in seat 0 against the
/// Council's seat), it re-simulates round by round to its own result (`gbely replay verify`),
/// and that result's figures are the verdict's. The disqualification's reason, in the judge's
/// words for the replay's fourth violation. (What it cannot show is that the agent's answers
/// came from the submission's file: a worker's token is for a machine the organisers run.)
fn replay_gives(a: &Arena, sub: &Submission, outcome: &Outcome) -> Result<String, Unkept> {
    let config = &a.config;
    let (leaderboard, _) =
        a.judging.leaderboard_map().map_err(|e| Unkept::Server(format!("the leaderboard's map: {e}")))?;
    let mismatch = |why: String| Unkept::Mismatch(why);
    let read = gbely_engine::replays::read_replay_or_cut(&config.data.join(&outcome.replay))
        .map_err(|e| mismatch(format!("its replay cannot be read: {e}")))?;
    if read.cut_short {
        return Err(mismatch("its replay was cut short: not a whole match".into()));
    }
    let replay = read.replay;
    let map = replay.check().map_err(|e| mismatch(format!("its replay: {e}")))?;
    if map.grid() != leaderboard.grid() || map.seats() != leaderboard.seats() {
        return Err(mismatch("its replay is not played on the leaderboard's map".into()));
    }
    if replay.rounds != config.leaderboard.rounds {
        return Err(mismatch(format!(
            "its replay has {} rounds, the leaderboard's match {}",
            replay.rounds, config.leaderboard.rounds
        )));
    }
    gbely_engine::replays::verify(&replay).map_err(|m| mismatch(format!("its replay does not re-simulate: {m}")))?;
    let side = |seat| replay.result.sides.iter().find(|s| s.seat == seat);
    let (Some(agent), Some(council)) = (side(0), side(1)) else {
        return Err(mismatch("its replay has not the leaderboard's two seats".into()));
    };
    if council.name != "council" {
        return Err(mismatch(format!("its second seat is `{}`, not the leaderboard's opponent", council.name)));
    }
    // The fourth violation: the last of seat 0's, and its round.
    let fourth = replay.turns.iter().rev().find_map(|t| match t.answers.first() {
        Some(gbely_world::replay::Answer::Violation(v)) => Some((t.round, v)),
        _ => None,
    });
    let disqualified = agent.disqualified.then(|| fourth.map(|(round, _)| i64::from(round))).flatten();
    let said = (
        sub.agent_name.as_str(),
        outcome.share,
        outcome.cells,
        outcome.tiebreak,
        outcome.violations,
        outcome.disqualified,
        outcome.council_fell,
        outcome.rounds,
    );
    let played = (
        agent.name.as_str(),
        agent.score,
        i64::from(agent.cells),
        agent.tiebreak_round.map(i64::from),
        i64::from(agent.violations),
        disqualified,
        replay.result.council_fell.map(i64::from),
        replay.turns.len() as i64,
    );
    if said != played {
        return Err(mismatch(format!(
            "the verdict says (agent, share, cells, tie-break, violations, disqualified in, the Council fell in, rounds) \
             {said:?}, its replay {played:?}"
        )));
    }
    Ok(match (disqualified, fourth) {
        (Some(round), Some((_, v))) => {
            disqualification(Lang::En, round as u32, Some((v.kind.wire(), v.detail.as_str())))
        }
        _ => String::new(),
    })
}

async fn release(State(a): Shared, Authed(w): Authed, UrlPath((job, attempt)): UrlPath<(i64, i64)>) -> Response {
    let job = match held(&a, &w, job, attempt).await {
        Ok(j) => j,
        Err(r) => return r,
    };
    match a.store.release(&job).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => internal("giving the job back", &e),
    }
}

// — The organisers' side —

#[derive(Deserialize)]
struct IssueForm {
    csrf: String,
    name: String,
}

/// Issues a worker token: shown once on the page that answers, kept hashed.
impl WithCsrf for IssueForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

async fn issue(State(a): Shared, ui: Ui, OrganiserForm(user, f): OrganiserForm<IssueForm>) -> Response {
    let name: String = f.name.trim().chars().filter(|c| !c.is_control()).take(60).collect();
    if name.is_empty() {
        return a.refuse(&ui, Some(&user), StatusCode::BAD_REQUEST, &tr!(ui.lang, "workers-err-name"));
    }
    let (Ok(one), Ok(two)) = (gbely_engine::app::web::random_token(), gbely_engine::app::web::random_token()) else {
        return a.refuse(&ui, Some(&user), StatusCode::INTERNAL_SERVER_ERROR, &tr!(ui.lang, "err-randomness"));
    };
    let token = format!("{TOKEN_PREFIX}{one}{two}");
    if let Err(e) = a.store.add_worker(&name, &hashed(&token), unix_now()).await {
        return a.internal(&ui, Some(&user), |l| tr!(l, "doing-worker-token"), &e);
    }
    a.audit(&user, Act::IssueWorker { name: name.clone() }).await;
    let l = ui.lang;
    let server = a.config.public_url.trim_end_matches('/');
    let body = html! {
        h2 { (tr!(l, "workers-issued-title", name = name.as_str())) }
        p { (tr!(l, "workers-issued-once")) }
        pre #worker-token { (token) }
        p { (tr!(l, "workers-issued-how")) }
        pre { "GBELY_WORKER_TOKEN=" (token) " gbely arena worker --server " (server) }
        p { a href="/org#workers" { (tr!(l, "workers-back")) } }
    };
    a.page(&ui, Some(&user), &tr!(l, "workers-title"), body)
}

async fn revoke(
    State(a): Shared,
    ui: Ui,
    UrlPath(id): UrlPath<i64>,
    OrganiserForm(user, _): OrganiserForm<CsrfForm>,
) -> Response {
    match a.store.revoke_worker(id, unix_now()).await {
        Ok(true) => {
            a.audit(&user, Act::RevokeWorker { worker: id }).await;
            redirect("/org#workers")
        }
        Ok(false) => a.refuse(&ui, Some(&user), StatusCode::NOT_FOUND, &tr!(ui.lang, "workers-err-none", id = id)),
        Err(e) => a.internal(&ui, Some(&user), |l| tr!(l, "doing-worker-revoke"), &e),
    }
}

/// Judges again, in one click, the uploads a worker disqualified by timeouts (a worker later
/// found slow may have caused them).
async fn rejudge_timeouts(
    State(a): Shared,
    ui: Ui,
    UrlPath(id): UrlPath<i64>,
    OrganiserForm(user, _): OrganiserForm<CsrfForm>,
) -> Response {
    let ids = match a.store.timeout_disqualifications(id).await {
        Ok(ids) => ids,
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-queue-rejudge"), &e),
    };
    if let Err(e) = a.store.rejudge(Some(&ids), unix_now()).await {
        return a.internal(&ui, Some(&user), |l| tr!(l, "doing-queue-rejudge"), &e);
    }
    a.audit(&user, Act::RejudgeTimeouts { worker: id, submissions: ids }).await;
    redirect("/org#workers")
}

/// The organisers' page's section: the workers over HTTP and the form that issues a token.
pub(crate) async fn org_section(a: &Arena, l: Lang, user: &User) -> Markup {
    let workers = a.store.workers().await.unwrap_or_default();
    let when = |t: i64| a.config.local_in(jiff::Timestamp::from_second(t).unwrap_or_default(), l);
    html! {
        h2 #workers { (tr!(l, "workers-title")) }
        p { (tr!(l, "workers-intro")) }
        @if workers.is_empty() {
            p.muted { (tr!(l, "workers-none")) }
        } @else {
            div.wide tabindex="0" role="region" aria-label=(tr!(l, "workers-title")) {
                table #worker-list {
                    thead { tr {
                        th { (tr!(l, "workers-col-name")) }
                        th { (tr!(l, "workers-col-issued")) }
                        th { (tr!(l, "workers-col-seen")) }
                        th { (tr!(l, "workers-col-judged")) }
                        th { (tr!(l, "workers-col-speed")) }
                        th { (tr!(l, "workers-col-state")) }
                    } }
                    tbody {
                        @for w in &workers {
                            tr data-worker=(w.id) {
                                td { (w.name) }
                                td { (when(w.created)) }
                                td {
                                    @if w.seen == 0 { "—" } @else { (when(w.seen)) }
                                    @if !w.host.is_empty() { " (" (w.host) ")" }
                                }
                                td { (w.judged) }
                                td.speed {
                                    @match &w.speed {
                                        Some((s, share, at)) => {
                                            @if *share < a.config.judge.min_speed {
                                                strong { (tr!(l, "workers-slow", share = l.decimal(*share, 2))) }
                                            } @else {
                                                (tr!(l, "workers-speed", share = l.decimal(*share, 2)))
                                            }
                                            br;
                                            span.muted { (tr!(l, "workers-speed-figures", engine = l.decimal(s.engine_ms, 0),
                                                python = l.decimal(s.python_ms, 0), at = when(*at))) }
                                        }
                                        None => { "—" }
                                    }
                                    @if !w.timeouts.is_empty() {
                                        form method="post" action=(format!("/org/workers/{}/rejudge", w.id)) {
                                            input type="hidden" name="csrf" value=(user.csrf);
                                            button.rejudge-timeouts { (tr!(l, "workers-rejudge-timeouts", count = w.timeouts.len())) }
                                        }
                                    }
                                }
                                td {
                                    @match w.revoked {
                                        Some(t) => { (tr!(l, "workers-revoked", at = when(t))) }
                                        None => {
                                            form method="post" action=(format!("/org/workers/{}/revoke", w.id)) {
                                                input type="hidden" name="csrf" value=(user.csrf);
                                                button { (tr!(l, "workers-revoke")) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        form #issue-worker method="post" action="/org/workers" {
            input type="hidden" name="csrf" value=(user.csrf);
            label for="worker-name" { (tr!(l, "workers-name")) }
            " "
            input #worker-name type="text" name="name" required maxlength="60";
            " "
            button { (tr!(l, "workers-issue")) }
        }
    }
}
