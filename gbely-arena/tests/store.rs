#![cfg(unix)]
//! The arena's data layer (`gbely_arena::store`) on SQLite and on a PostgreSQL server the test
//! starts itself (Debian's initdb in a temporary folder): the limits hold under parallel
//! requests (the count and the insert are one step), the judges take jobs fairly between
//! participants, a newer upload supersedes an older one still queued, the leaderboard keeps a
//! participant's row while a new upload is judged, the final refuses to start while any job
//! is pending, the organisers' actions are logged, and the public results open once. Expected
//! values come from docs/arena.md's rules, by hand.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;

use gbely_arena::audit::Act;
use gbely_arena::store::{
    FinalState, NewSignin, Outcome, SigninLimits, SigninRefusal, Store, Submission, SubmissionState, Verdict,
};

/// A fresh folder of this test's own in the temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gbely-arena-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap()
}

fn upload(email: &str, uploaded: i64) -> Submission {
    Submission {
        id: 0,
        email: email.into(),
        uploaded,
        file_name: "a.py".into(),
        bytes: 10,
        version: "v".into(),
        agent_name: email.split('@').next().unwrap().into(),
        state: SubmissionState::Queued,
        reason: String::new(),
        check: String::new(),
        stored: format!("{email}-{uploaded}.py"),
    }
}

fn scored(submission: i64, share: f64, tiebreak: i64) -> Verdict {
    Verdict::Judged {
        outcome: Outcome {
            submission,
            share: Some(share),
            cells: 0,
            tiebreak: Some(tiebreak),
            violations: 0,
            disqualified: None,
            council_fell: None,
            rounds: 150,
            replay: String::new(),
            log: String::new(),
            judged: 0,
            times: Default::default(),
        },
        reason: String::new(),
        check: "{}".into(),
    }
}

fn disqualified(submission: i64) -> Verdict {
    let Verdict::Judged { mut outcome, .. } = scored(submission, 0.0, 0) else { unreachable!() };
    outcome.share = None;
    outcome.tiebreak = None;
    outcome.disqualified = Some(13);
    Verdict::Judged { outcome, reason: "disqualified in round 13".into(), check: "{}".into() }
}

/// A PostgreSQL server of the test's own, stopped when dropped.
struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_user: Vec<String>,
}

impl Postgres {
    fn start() -> Postgres {
        let initdb = std::fs::read_dir("/usr/lib/postgresql")
            .expect("the arena's PostgreSQL tests need Debian's postgresql (./run-tests installs it)")
            .filter_map(|e| Some(e.ok()?.path().join("bin/initdb")))
            .filter(|p| p.exists())
            .max()
            .expect("no /usr/lib/postgresql/*/bin/initdb");
        let bin = initdb.parent().unwrap().to_path_buf();
        let dir = std::env::temp_dir().join(format!("gbely-pg-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        // PostgreSQL refuses to run as root: as the package's own user.
        let root = nix::unistd::geteuid().is_root();
        let as_user: Vec<String> =
            if root { ["runuser", "-u", "postgres", "--"].map(String::from).to_vec() } else { Vec::new() };
        if root {
            let ok = Command::new("chown").args(["postgres"]).arg(&dir).status().unwrap().success();
            assert!(ok, "chown postgres {}", dir.display());
        }
        let port = free_port();
        let run = |args: Vec<String>| {
            let (prog, rest) = args.split_first().unwrap();
            let out = Command::new(prog).args(rest).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let data = dir.join("data").display().to_string();
        let mut init = as_user.clone();
        init.extend([initdb.display().to_string(), "-D".into(), data.clone(), "-A".into(), "trust".into()]);
        init.extend(["-U".into(), "postgres".into(), "--no-sync".into()]);
        run(init);
        let mut start = as_user.clone();
        start.extend([bin.join("pg_ctl").display().to_string(), "-D".into(), data, "-l".into()]);
        start.extend([dir.join("log").display().to_string(), "-w".into(), "-o".into()]);
        start.extend([format!("-h 127.0.0.1 -p {port} -k {} -F", dir.display()), "start".into()]);
        run(start);
        Postgres { dir, bin, port, as_user }
    }

    /// A fresh database's URL.
    fn database(&self, name: &str) -> String {
        let mut create = self.as_user.clone();
        create.extend([self.bin.join("psql").display().to_string(), "-h".into(), "127.0.0.1".into()]);
        create.extend(["-p".into(), self.port.to_string(), "-U".into(), "postgres".into(), "-c".into()]);
        create.push(format!("CREATE DATABASE {name}"));
        let (prog, rest) = create.split_first().unwrap();
        let out = Command::new(prog).args(rest).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let mut stop = self.as_user.clone();
        stop.extend([self.bin.join("pg_ctl").display().to_string(), "-D".into()]);
        stop.extend([self.dir.join("data").display().to_string(), "-m".into(), "immediate".into(), "stop".into()]);
        let (prog, rest) = stop.split_first().unwrap();
        let _ = Command::new(prog).args(rest).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64
}

/// Runs `check` on a fresh SQLite store and on a fresh PostgreSQL database of one server.
fn on_both<F, Fut>(name: &str, pg: &Postgres, check: F)
where
    F: Fn(Store) -> Fut,
    Fut: Future<Output = ()>,
{
    let rt = runtime();
    let dir: PathBuf = scratch(name);
    rt.block_on(async {
        let store = Store::open("sqlite", Path::new(&dir)).await.unwrap();
        check(store.clone()).await;
        store.close().await;
        let store = Store::open(&pg.database(name), Path::new(&dir)).await.unwrap();
        assert_eq!(store.backend_name(), "PostgreSQL");
        check(store.clone()).await;
        store.close().await;
    });
}

const LIMITS: SigninLimits = SigninLimits { per_address: 2, per_requester: 3, total_new: 4 };

async fn signin(store: &Store, code: &str, email: &str, requester: &str) -> Result<(), SigninRefusal> {
    let s = NewSignin { code_hash: code, email, requester, now: 1_000_000, expires: 1_001_000 };
    store.add_signin_limited(&s, &LIMITS).await.unwrap()
}

/// Twenty sign-in requests for one address from one requester at once, with a limit of two an
/// hour: two e-mails. Twenty uploads at once with a limit of two: two stored.
async fn limits_hold_under_parallel_requests(store: Store) {
    let tasks: Vec<_> = (0..20)
        .map(|k| {
            let store = store.clone();
            tokio::spawn(async move { signin(&store, &format!("code{k}"), "ana@mail.example", "10.0.0.1").await })
        })
        .collect();
    let mut sent = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(()) => sent += 1,
            Err(why) => assert_eq!(why, SigninRefusal::Address),
        }
    }
    assert_eq!(sent, 2, "sign-in e-mails sent");
    assert_eq!(store.signins_since(0).await.unwrap(), 2);

    let tasks: Vec<_> = (0..20)
        .map(|k| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut s = upload("bo@mail.example", 5_000 + k);
                s.stored = format!("bo-{k}.py");
                store.add_submission(&s, 2).await.unwrap()
            })
        })
        .collect();
    let mut stored = 0;
    for t in tasks {
        stored += usize::from(t.await.unwrap().is_some());
    }
    assert_eq!(stored, 2, "uploads accepted");
    assert_eq!(store.submissions_of("bo@mail.example").await.unwrap().len(), 2);
    // An hour after the first, the limit counts afresh.
    assert!(store.add_submission(&upload("bo@mail.example", 5_000 + 3_600 + 20), 2).await.unwrap().is_some());
}

#[test]
fn limits_hold_under_parallel_requests_on_sqlite_and_postgresql() {
    let pg = Postgres::start();
    on_both("limits", &pg, limits_hold_under_parallel_requests);
    on_both("signins", &pg, a_stranger_cannot_lock_a_participant_out);
    on_both("fair", &pg, judges_are_fair_between_participants);
    on_both("board", &pg, the_board_keeps_a_row_while_a_new_upload_is_judged);
    on_both("final", &pg, the_final_waits_for_every_pending_job);
    on_both("leases", &pg, a_lapsed_lease_is_judged_again_and_one_result_counts);
    on_both("export", &pg, the_public_results_are_opened_once_and_stay_open);
    on_both("language", &pg, a_participant_keeps_the_language_last_used);
    on_both("workers", &pg, a_revoked_worker_holds_nothing);
    on_both("rush", &pg, judges_claiming_at_once_take_each_job_once);
}

/// The public results' flag (migration 4): closed in a new database; an organiser's opening
/// records its instant; a second opening changes nothing (the first instant stays).
async fn the_public_results_are_opened_once_and_stay_open(store: Store) {
    assert_eq!(store.export_opened().await.unwrap(), None);
    let before = store.version().await.unwrap();
    assert!(store.open_export(1_800_000_000).await.unwrap());
    assert_eq!(store.export_opened().await.unwrap(), Some(1_800_000_000));
    assert!(store.version().await.unwrap() > before, "the pages hear of it");
    assert!(!store.open_export(1_800_000_500).await.unwrap());
    assert_eq!(store.export_opened().await.unwrap(), Some(1_800_000_000));
}

/// A stranger asking five times for someone else's address uses up their own allowance, not
/// the owner's; a flood of junk addresses stops new addresses but not a participant who has
/// signed in before.
async fn a_stranger_cannot_lock_a_participant_out(store: Store) {
    let stranger = "203.0.113.9";
    let mut refused = Vec::new();
    for k in 0..5 {
        if let Err(why) = signin(&store, &format!("s{k}"), "ana@mail.example", stranger).await {
            refused.push(why);
        }
    }
    assert_eq!(refused, vec![SigninRefusal::Address; 3]);
    assert_eq!(
        signin(&store, "own", "ana@mail.example", "198.51.100.7").await,
        Ok(()),
        "the owner still gets a link ({})",
        store.backend_name()
    );
    // The requester's allowance over all addresses (3): 2 used on ana, 1 more, then refused.
    assert_eq!(signin(&store, "x1", "junk1@mail.example", stranger).await, Ok(()));
    assert_eq!(signin(&store, "x2", "junk2@mail.example", stranger).await, Err(SigninRefusal::Requester));
    // The site's allowance for new addresses (4): ana (never signed in) had 3, junk1 1.
    assert_eq!(signin(&store, "y1", "new@mail.example", "192.0.2.1").await, Err(SigninRefusal::Site));
    // A participant who has uploaded is not new: the site's cap does not stop them.
    assert!(store.add_submission(&upload("old@mail.example", 900_000), 10).await.unwrap().is_some());
    assert_eq!(signin(&store, "y2", "old@mail.example", "192.0.2.2").await, Ok(()));
}

/// Participant A's four uploads, then newcomer B's: with one of A's being judged, B's is taken
/// next, before A's last; A's uploads between the first and the last are superseded unjudged.
async fn judges_are_fair_between_participants(store: Store) {
    let now = 2_000_000;
    let a1 = store.add_submission(&upload("a@mail.example", now), 10).await.unwrap().unwrap();
    let first = store.claim("w1", 0, now, 60).await.unwrap().expect("a job");
    assert_eq!(first.submission, a1);
    let mut later = Vec::new();
    for k in 1..5 {
        later.push(store.add_submission(&upload("a@mail.example", now + k), 10).await.unwrap().unwrap());
    }
    let b = store.add_submission(&upload("b@mail.example", now + 10), 10).await.unwrap().unwrap();
    let second = store.claim("w2", 0, now + 11, 60).await.unwrap().expect("a job");
    assert_eq!(second.submission, b, "the newcomer's upload before A's fifth");
    // Each superseded by the next upload, which came while it was queued.
    for pair in later.windows(2) {
        let s = store.submission(pair[0]).await.unwrap().unwrap();
        assert_eq!(s.state, "superseded", "upload {}", pair[0]);
        assert!(s.reason.starts_with(&format!("superseded by upload {} ", pair[1])), "{}", s.reason);
    }
    assert!(store.finish(&first, &scored(a1, 40.0, 80), now + 12).await.unwrap());
    let third = store.claim("w1", 0, now + 13, 60).await.unwrap().expect("a job");
    assert_eq!(third.submission, later[3]);
    assert!(store.claim("w3", 0, now + 14, 60).await.unwrap().is_none(), "nothing else is queued");
    // Round-robin with nobody being judged: C's older job waits behind D's, whose participant
    // was served longer ago… C was never served, D neither: the older job first.
    assert!(store.finish(&second, &scored(b, 30.0, 70), now + 15).await.unwrap());
    assert!(store.finish(&third, &scored(later[3], 41.0, 80), now + 16).await.unwrap());
    let b2 = store.add_submission(&upload("b@mail.example", now + 20), 10).await.unwrap().unwrap();
    let c = store.add_submission(&upload("c@mail.example", now + 21), 10).await.unwrap().unwrap();
    // B was served before (claimed), C never: C's job first although B's is older.
    assert_eq!(store.claim("w1", 0, now + 22, 60).await.unwrap().unwrap().submission, c);
    assert_eq!(store.claim("w2", 0, now + 23, 60).await.unwrap().unwrap().submission, b2);
}

/// A's scored upload stays on the board, marked pending, while A's new upload is judged, and
/// while a re-judging of it runs; a disqualified new upload takes the row away.
async fn the_board_keeps_a_row_while_a_new_upload_is_judged(store: Store) {
    let now = 3_000_000;
    let a1 = store.add_submission(&upload("a@mail.example", now), 10).await.unwrap().unwrap();
    let b1 = store.add_submission(&upload("b@mail.example", now + 1), 10).await.unwrap().unwrap();
    let j = store.claim("w", 0, now, 60).await.unwrap().unwrap();
    assert!(store.finish(&j, &scored(a1, 40.0, 80), now + 2).await.unwrap());
    let j = store.claim("w", 0, now, 60).await.unwrap().unwrap();
    assert!(store.finish(&j, &scored(b1, 45.0, 60), now + 3).await.unwrap());
    let rows = |b: Vec<gbely_arena::store::BoardRow>| {
        b.iter().map(|r| (r.rank, r.submission.id, r.pending)).collect::<Vec<_>>()
    };
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, false), (2, a1, false)]);
    // A's new upload, queued then being judged: A's row stays, pending.
    let a2 = store.add_submission(&upload("a@mail.example", now + 4), 10).await.unwrap().unwrap();
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, false), (2, a1, true)]);
    let j = store.claim("w", 0, now + 5, 60).await.unwrap().unwrap();
    store.set_state(a2, SubmissionState::Running).await.unwrap();
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, false), (2, a1, true)]);
    // Re-judging B: B's row stays, pending.
    store.rejudge(Some(&[b1]), now + 6).await.unwrap();
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, true), (2, a1, true)]);
    // A's new upload disqualified: the last upload counts, A's row goes.
    assert!(store.finish(&j, &disqualified(a2), now + 7).await.unwrap());
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, true)]);
    let j = store.claim("w", 0, now + 8, 60).await.unwrap().unwrap();
    assert!(store.finish(&j, &scored(b1, 45.0, 60), now + 9).await.unwrap());
    assert_eq!(rows(store.board().await.unwrap()), vec![(1, b1, false)]);
}

/// No final while a job is pending (an upload, a re-judging); once none is, it starts; the
/// organisers' actions are in the audit log, newest first.
async fn the_final_waits_for_every_pending_job(store: Store) {
    let now = 4_000_000;
    let a1 = store.add_submission(&upload("a@mail.example", now), 10).await.unwrap().unwrap();
    assert_eq!(store.start_final(now, "").await.unwrap(), Err(1));
    let j = store.claim("w", 0, now, 60).await.unwrap().unwrap();
    assert_eq!(store.start_final(now, "").await.unwrap(), Err(1), "being judged is pending too");
    assert!(!store.judged_before(&j).await.unwrap(), "an upload's first judging");
    assert!(store.finish(&j, &scored(a1, 40.0, 80), now + 1).await.unwrap());
    store.rejudge(None, now + 2).await.unwrap();
    assert_eq!(store.pending_jobs().await.unwrap(), 1);
    assert_eq!(store.start_final(now, "").await.unwrap(), Err(1), "a re-judging is pending");
    let j = store.claim("w", 0, now + 3, 60).await.unwrap().unwrap();
    assert!(store.judged_before(&j).await.unwrap(), "a re-judging: its e-mail says so");
    assert!(store.finish(&j, &scored(a1, 40.0, 80), now + 4).await.unwrap());
    let id = store.start_final(now + 5, "{\"seats\": []}").await.unwrap().expect("nothing pending");
    let fin = store.last_final().await.unwrap().unwrap();
    assert_eq!((fin.state.as_str(), fin.seating.as_str()), ("running", "{\"seats\": []}"));
    // Cut off (still running after a crash) or stopped: it can be resumed; finished, not.
    assert!(store.resume_final(id).await.unwrap());
    store.end_final(id, FinalState::Interrupted, "", "").await.unwrap();
    assert!(store.resume_final(id).await.unwrap());
    store.end_final(id, FinalState::Finished, "{}", "finals/1/replay.json.gz").await.unwrap();
    assert!(!store.resume_final(id).await.unwrap());
    assert_eq!(store.last_final().await.unwrap().unwrap().id, id);
    store.audit(now + 6, "org@mail.example", &Act::Rejudge { submission: None, count: 3 }).await.unwrap();
    store.audit(now + 7, "org@mail.example", &Act::RunFinal { run: id }).await.unwrap();
    let log = store.audit_log(10).await.unwrap();
    let got: Vec<(&str, &str, &str)> =
        log.iter().map(|e| (e.what.as_str(), e.detail.as_str(), e.who.as_str())).collect();
    let final_id = format!("final {id}");
    assert_eq!(
        got,
        vec![
            ("run the final", final_id.as_str(), "org@mail.example"),
            ("re-judge", "all current submissions (3)", "org@mail.example")
        ]
    );
    // The act itself is kept, for /org to say it in the reader's language.
    assert_eq!(serde_json::from_str::<Act>(&log[0].act).unwrap(), Act::RunFinal { run: id });
}

/// The judges' leases: a job is held while its lease runs (renewed by its worker); once it lapses
/// (a dead worker) another worker takes it as a new attempt, and the first worker's late renewal,
/// result and release are refused without writing anything. One result per submission: a second
/// finish of the same attempt writes nothing either. A released job is queued again at once.
async fn a_lapsed_lease_is_judged_again_and_one_result_counts(store: Store) {
    let now = 5_000_000;
    let a = store.add_submission(&upload("a@mail.example", now), 10).await.unwrap().unwrap();
    let first = store.claim("w1", 0, now, 60).await.unwrap().expect("a job");
    assert_eq!((first.submission, first.attempt), (a, 1));
    assert!(store.claim("w2", 0, now + 30, 60).await.unwrap().is_none(), "held by w1's lease");
    assert!(store.renew(&first, now + 90).await.unwrap());
    assert!(store.claim("w2", 0, now + 89, 60).await.unwrap().is_none(), "held until now + 90");
    // w1 falls silent: its lease lapses, w2 takes the job as attempt 2.
    let second = store.claim("w2", 0, now + 91, 60).await.unwrap().expect("the lapsed job");
    assert_eq!((second.id, second.submission, second.attempt), (first.id, a, 2));
    store.set_state(a, SubmissionState::Running).await.unwrap(); // as the judge marks what it judges
    assert!(!store.renew(&first, now + 200).await.unwrap(), "w1's lease is gone");
    assert!(!store.finish(&first, &scored(a, 10.0, 5), now + 92).await.unwrap(), "a late result is dropped");
    assert!(store.outcome(a).await.unwrap().is_none());
    store.release(&first).await.unwrap();
    assert_eq!(store.submission(a).await.unwrap().unwrap().state, "running", "w1's release changes nothing");
    assert!(store.finish(&second, &scored(a, 45.0, 60), now + 93).await.unwrap());
    assert!(!store.finish(&second, &scored(a, 99.0, 1), now + 94).await.unwrap(), "one result per submission");
    let outcome = store.outcome(a).await.unwrap().unwrap();
    assert_eq!((outcome.share, outcome.tiebreak, outcome.judged), (Some(45.0), Some(60), now + 93));
    assert_eq!(store.all_outcomes().await.unwrap().len(), 1);
    assert_eq!(store.submission(a).await.unwrap().unwrap().state, "scored");
    // A worker stopping gives its job back: queued again, taken at once as the next attempt.
    let b = store.add_submission(&upload("b@mail.example", now + 100), 10).await.unwrap().unwrap();
    let job = store.claim("w3", 0, now + 101, 60).await.unwrap().unwrap();
    assert_eq!(job.submission, b);
    store.release(&job).await.unwrap();
    assert_eq!(store.submission(b).await.unwrap().unwrap().state, "queued");
    let again = store.claim("w4", 0, now + 102, 60).await.unwrap().expect("the released job");
    assert_eq!((again.id, again.attempt), (job.id, job.attempt + 1));
}

/// The language a participant last used (their e-mails are written in it): none at first, then
/// the last one kept, each participant their own.
async fn a_participant_keeps_the_language_last_used(store: Store) {
    assert_eq!(store.language("ana@mail.example").await.unwrap(), None);
    store.set_language("ana@mail.example", "sk").await.unwrap();
    store.set_language("bob@mail.example", "en").await.unwrap();
    store.set_language("ana@mail.example", "en").await.unwrap();
    store.set_language("ana@mail.example", "sk").await.unwrap();
    assert_eq!(store.language("ana@mail.example").await.unwrap().as_deref(), Some("sk"));
    assert_eq!(store.language("bob@mail.example").await.unwrap().as_deref(), Some("en"));
}

/// Workers over HTTP (migration 7): a token is found by its hash and records its last request
/// and host; a job claimed by worker 1 is held by it alone; revoking worker 1 refuses its token
/// from then on and puts its job back in the queue at once, where worker 2 takes it as the next
/// attempt; worker 1's late result is dropped. Each worker's count is the jobs it ended.
async fn a_revoked_worker_holds_nothing(store: Store) {
    let now = 6_000_000;
    let one = store.add_worker("hall-1", "hash-1", now).await.unwrap();
    let two = store.add_worker("hall-2", "hash-2", now).await.unwrap();
    assert_ne!(one, two);
    assert!(store.worker_of_token("hash-3", now, None).await.unwrap().is_none(), "an unknown token");
    let w = store.worker_of_token("hash-1", now + 5, Some("pc-17")).await.unwrap().expect("worker 1");
    assert_eq!(
        (w.id, w.name.as_str(), w.seen, w.host.as_str(), w.revoked, w.judged),
        (one, "hall-1", now + 5, "pc-17", None, 0)
    );
    let a = store.add_submission(&upload("a@mail.example", now), 10).await.unwrap().unwrap();
    let job = store.claim("hall-1", one, now + 6, 60).await.unwrap().expect("a job");
    let held = |w| store.held(job.id, job.attempt, w);
    assert_eq!(held(one).await.unwrap().map(|j| j.submission), Some(a));
    assert!(held(two).await.unwrap().is_none(), "not worker 2's");
    assert!(store.claim("hall-2", two, now + 7, 60).await.unwrap().is_none(), "held by worker 1's lease");
    store.set_state(a, SubmissionState::Running).await.unwrap(); // as the worker's heartbeat shows it
    assert!(store.revoke_worker(one, now + 8).await.unwrap());
    assert_eq!(store.submission(a).await.unwrap().unwrap().state, "queued", "back in the queue at once");
    assert!(!store.revoke_worker(one, now + 9).await.unwrap(), "revoked once");
    let w = store.worker_of_token("hash-1", now + 10, Some("elsewhere")).await.unwrap().unwrap();
    assert_eq!(
        (w.revoked, w.seen, w.host.as_str()),
        (Some(now + 8), now + 5, "pc-17"),
        "a revoked token records nothing"
    );
    let again = store.claim("hall-2", two, now + 11, 60).await.unwrap().expect("the revoked worker's job, at once");
    assert_eq!((again.id, again.attempt), (job.id, 2));
    assert!(held(one).await.unwrap().is_none(), "revoked: held no more");
    assert!(!store.finish(&job, &scored(a, 10.0, 5), now + 12).await.unwrap(), "worker 1's late result");
    assert!(store.finish(&again, &scored(a, 45.0, 60), now + 13).await.unwrap());
    let listed: Vec<_> = store.workers().await.unwrap().iter().map(|w| (w.id, w.judged, w.revoked.is_some())).collect();
    assert_eq!(listed, vec![(two, 1, false), (one, 0, true)], "newest first");
}

/// Judges claim at once while uploads wait, five times over: each job is taken once, and none
/// is left waiting while a judge was told there was nothing (on PostgreSQL the judges' claims
/// race for the same row: the later ones found it taken and claimed nothing).
async fn judges_claiming_at_once_take_each_job_once(store: Store) {
    let now = 7_000_000;
    for wave in 0..5_i64 {
        let mut ids = Vec::new();
        for who in 0..12 {
            let email = format!("p{wave}-{who}@mail.example");
            ids.push(store.add_submission(&upload(&email, now + wave), 10).await.unwrap().unwrap());
        }
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(16));
        let claims: Vec<_> = (0..16)
            .map(|k| {
                let (store, barrier) = (store.clone(), std::sync::Arc::clone(&barrier));
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.claim(&format!("w{k}"), 100 + k, now + wave, 60).await.unwrap()
                })
            })
            .collect();
        let mut taken = Vec::new();
        for c in claims {
            taken.extend(c.await.unwrap().map(|j| j.submission));
        }
        taken.sort_unstable();
        let counts = store.job_counts().await.unwrap();
        assert_eq!(taken, ids, "{}, wave {wave}: each job once, none left waiting ({counts:?})", store.backend_name());
    }
}
