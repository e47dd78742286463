//! The `gbely-arena` program (`gbely arena …`): its commands, its example configuration (which
//! loads as it is printed), a missing configuration refused in one line, and the public results
//! and the JSON API as the program serves them.

use std::process::Command;

fn arena(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gbely-arena")).args(args).output().expect("runs")
}

#[test]
fn its_help_names_its_commands_and_its_example_configuration_loads() {
    let out = arena(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for command in ["serve", "worker", "example"] {
        assert!(help.contains(command), "{help}");
    }
    assert!(help.contains("Usage: gbely arena"), "{help}");
    let out = arena(&["example"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let dir = std::env::temp_dir().join(format!("gbely-arena-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("arena.toml"), &text).unwrap();
    gbely_arena::config::Config::load(&dir.join("arena.toml")).expect("the example loads");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_configuration_is_refused_in_one_line() {
    let out = arena(&["serve", "/nonexistent/arena.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("gbely: error: ") && err.contains("/nonexistent/arena.toml"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// The worker's help says how often it measures itself by default (the help's text and
/// `speed::EVERY` are one figure).
#[test]
fn the_workers_help_gives_the_measuring_default() {
    let out = arena(&["worker", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    let every = format!("[default: {}]", gbely_arena::speed::EVERY.as_secs());
    assert!(help.contains(&every), "{every} in {help}");
}

/// A database worker (CONFIG) takes none of the HTTP worker's options: each is refused, naming
/// it, rather than accepted and ignored.
#[test]
fn a_database_worker_refuses_the_http_workers_options() {
    for option in [["--measure-every", "5"], ["--folder", "/tmp/x"], ["--token-file", "/tmp/t"]] {
        let out = arena(&["worker", "/nonexistent/arena.toml", option[0], option[1]]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{option:?}: {err}");
        assert!(err.contains(option[0]) && err.contains("cannot be used with"), "{option:?}: {err}");
    }
}

/// The public results and the JSON API against the program (`gbely arena serve`, its clock the
/// file `$GBELY_ARENA_CLOCK` names, judging nothing itself): two participants' judged results
/// are put in its database, with replay files of known bytes. Before the deadline the results
/// answer 403 and say when they open; after it they are open, and closed again when the clock is
/// put back (nobody opened them by hand); an organiser's form without its token is refused, with
/// it the results open. The board's CSV, the manifest's SHA-256 (`printf 'replay of ana' |
/// sha256sum`) and the archive are as worked out by hand, and nothing has an address in it. The
/// API: the board as the board shows it; one's own submissions with a session, 401 without, 404
/// for another participant's submission and replay, 405 for a `POST`.
#[test]
fn the_public_results_open_at_the_deadline_and_the_api_shows_only_ones_own() {
    use gbely_arena::store::{Outcome, Store, Submission, SubmissionState, Verdict};
    use sha2::{Digest, Sha256};

    let dir = std::env::temp_dir().join(format!("gbely-arena-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data/judging")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(
        dir.join("arena.toml"),
        format!(
            "name = \"Cup\"\ntime_zone = \"Europe/Bratislava\"\nlanguage = \"en\"\npublic_url = \"http://127.0.0.1:{port}\"\nport = {port}\n\
             organisers = [\"org@mail.example\"]\ndata = \"data\"\n[phases]\nregistration = \"2026-10-05 00:00:00\"\n\
             testing = \"2026-10-19 00:00:00\"\ndeadline = \"2026-11-15 23:59:59\"\nfinal = \"2026-11-27 18:00:00\"\n\
             [judge]\nworkers = 0\n[mail]\nurl = \"log\"\nfrom = \"Cup <cup@mail.example>\"\n"
        ),
    )
    .unwrap();
    let clock = dir.join("clock");
    // Bratislava is UTC+1 in November: the deadline is 22:59:59 UTC.
    std::fs::write(&clock, "2026-11-01T10:00:00Z").unwrap();

    // Two participants judged, and three sessions.
    let hex = |s: &str| Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (ana, ben) = rt.block_on(async {
        let store = Store::open("sqlite", &dir.join("data")).await.unwrap();
        let mut ids = Vec::new();
        for (email, name, share, cells, tiebreak) in
            [("ana@mail.example", "Ana, the \"first\"", 50.0, 1800, 30), ("ben@mail.example", "ben", 25.0, 900, 40)]
        {
            let short = &email[..3];
            std::fs::write(dir.join(format!("data/judging/{short}.json.gz")), format!("replay of {short}")).unwrap();
            let sub = Submission {
                id: 0,
                email: email.into(),
                uploaded: 1_793_000_000,
                file_name: format!("{short}.py"),
                bytes: 10,
                version: "v".into(),
                agent_name: name.into(),
                state: SubmissionState::Queued,
                reason: String::new(),
                check: String::new(),
                stored: format!("{short}.py"),
            };
            let id = store.add_submission(&sub, 10).await.unwrap().unwrap();
            let job = store.claim("test", 0, 1_793_000_000, 60).await.unwrap().unwrap();
            assert_eq!(job.submission, id);
            let outcome = Outcome {
                submission: id,
                share: Some(share),
                cells,
                tiebreak: Some(tiebreak),
                violations: 0,
                disqualified: None,
                council_fell: None,
                rounds: 150,
                replay: format!("judging/{short}.json.gz"),
                log: String::new(),
                judged: 0,
                times: Default::default(),
            };
            let verdict = Verdict::Judged { outcome, reason: String::new(), check: "{\"ok\": true}".into() };
            assert!(store.finish(&job, &verdict, 1_793_000_100).await.unwrap());
            ids.push(id);
        }
        for (who, cookie) in [("ana@mail.example", "a"), ("ben@mail.example", "b"), ("org@mail.example", "o")] {
            let cookie = cookie.repeat(32);
            store.add_session(&hex(&cookie), who, &format!("csrf-{who}"), 0, i64::MAX / 2).await.unwrap();
        }
        store.close().await;
        (ids[0], ids[1])
    });

    let mut server = Command::new(env!("CARGO_BIN_EXE_gbely-arena"))
        .args(["serve", dir.join("arena.toml").to_str().unwrap()])
        .env("GBELY_ARENA_CLOCK", &clock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let http = Http { port };
    let up = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() && http.get("/health", None).0 == 200
    });
    assert!(up, "the server did not answer");
    let ana_cookie = "a".repeat(32);
    let org_cookie = "o".repeat(32);

    // Closed before the deadline, and saying when it opens.
    for path in ["/export", "/export/board.csv", "/export/manifest.json", "/export/gbely-results.tar.gz"] {
        let (status, body) = http.get(path, None);
        assert_eq!(status, 403, "{path}");
        assert!(text(&body).contains("15 Nov 2026, 23:59"), "{path}: {}", text(&body));
    }
    // Open after it; closed again when the clock goes back.
    std::fs::write(&clock, "2026-11-15T23:00:00Z").unwrap();
    assert_eq!(http.get("/export/manifest.json", None).0, 200);
    std::fs::write(&clock, "2026-11-15T22:59:59Z").unwrap();
    assert_eq!(http.get("/export/manifest.json", None).0, 403);
    // An organiser's form: without its token refused, with it the results open.
    let (status, _) = http.post("/org/export", &org_cookie, "csrf=wrong");
    assert_eq!(status, 403);
    assert_eq!(http.get("/export/manifest.json", None).0, 403);
    let (status, _) = http.post("/org/export", &ana_cookie, "csrf=csrf-ana@mail.example");
    assert_eq!(status, 403, "a participant cannot open them");
    let (status, _) = http.post("/org/export", &org_cookie, "csrf=csrf-org%40mail.example");
    assert_eq!(status, 303);

    let (status, csv) = http.get("/export/board.csv", None);
    assert_eq!(status, 200);
    assert_eq!(
        text(&csv),
        format!(
            "place,submission,agent,version,share,tiebreak,violations,cells,rounds,council_fell,being_judged\r\n\
             1,{ana},\"Ana, the \"\"first\"\"\",v,50,30,0,1800,150,,false\r\n\
             2,{ben},ben,v,25,40,0,900,150,,false\r\n"
        )
    );
    let (_, manifest) = http.get("/export/manifest.json", None);
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(m["format"], "gbely-results");
    let replays = m["replays"].as_array().unwrap();
    assert_eq!(replays.len(), 2);
    assert_eq!(replays[0]["path"], format!("replays/leaderboard-{ana}.json.gz"));
    assert_eq!(replays[0]["sha256"], "62fbea4a0e5b3cb48747b7d56b37b871c4ccc84bf8255225c567aedbfbd02823");
    assert_eq!(replays[0]["bytes"], 13);
    assert_eq!((replays[0]["place"].as_u64(), replays[0]["submission"].as_i64()), (Some(1), Some(ana)));
    assert_eq!(replays[0]["sides"][0]["share"], 50.0);
    assert_eq!(replays[1]["sha256"], "99a5c6e7b1e3ecd9147b3ba443af59a54c7040d87eada053be57ef978ef04005");
    assert_eq!(replays[1]["name"], "ben");
    assert_eq!(http.get("/export/final.csv", None).0, 404, "no final yet");
    // The archive: the manifest (the same bytes) beside the documents and the replays.
    let (status, archive) = http.get("/export/gbely-results.tar.gz", None);
    assert_eq!(status, 200);
    let mut names = Vec::new();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive.as_slice()));
    for f in tar.entries().unwrap() {
        let mut f = f.unwrap();
        let name = f.path().unwrap().display().to_string();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
        if name == "gbely-results/manifest.json" {
            assert_eq!(bytes, manifest);
        }
        assert!(!text(&bytes).contains("mail.example"), "{name} has an address");
        names.push(name);
    }
    let want: Vec<String> = ["manifest.json", "README.txt", "board.csv", "board.json"]
        .iter()
        .map(|n| n.to_string())
        .chain([format!("replays/leaderboard-{ana}.json.gz"), format!("replays/leaderboard-{ben}.json.gz")])
        .map(|n| format!("gbely-results/{n}"))
        .collect();
    assert_eq!(names, want);

    // The API.
    let (status, board) = http.get("/api/board", None);
    assert_eq!(status, 200);
    assert!(!text(&board).contains("mail.example"));
    let b: serde_json::Value = serde_json::from_slice(&board).unwrap();
    let rows = b["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0]["place"].as_u64(), rows[0]["agent"].as_str()), (Some(1), Some("Ana, the \"first\"")));
    assert_eq!((rows[1]["place"].as_u64(), rows[1]["share"].as_f64()), (Some(2), Some(25.0)));
    assert_eq!(rows[1]["replay"], format!("/replay/{ben}"));
    let (status, body) = http.get("/api/me/submissions", None);
    assert_eq!(status, 401);
    assert!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"].is_string());
    let (status, mine) = http.get("/api/me/submissions", Some(&ana_cookie));
    assert_eq!(status, 200);
    let mine: serde_json::Value = serde_json::from_slice(&mine).unwrap();
    let mine = mine.as_array().unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!((mine[0]["id"].as_i64(), mine[0]["state"].as_str()), (Some(ana), Some("scored")));
    assert_eq!(mine[0]["result"]["share"], 50.0);
    assert_eq!(mine[0]["result"]["replay"], format!("/api/me/submissions/{ana}/replay"));
    assert_eq!(http.get(&format!("/api/me/submissions/{ana}"), Some(&ana_cookie)).0, 200);
    let (status, replay) = http.get(&format!("/api/me/submissions/{ana}/replay"), Some(&ana_cookie));
    assert_eq!((status, replay.as_slice()), (200, b"replay of ana".as_slice()));
    for path in [format!("/api/me/submissions/{ben}"), format!("/api/me/submissions/{ben}/replay")] {
        let (status, body) = http.get(&path, Some(&ana_cookie));
        assert_eq!(status, 404, "{path}");
        assert!(!text(&body).contains("replay of ben"), "{path}");
        assert!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"].is_string());
    }
    assert_eq!(http.get(&format!("/api/me/submissions/{ben}/replay"), None).0, 401);
    // Read-only, and every error in JSON.
    let (status, body) = http.post("/api/board", &ana_cookie, "");
    assert_eq!(status, 405);
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"], "the API is read-only: GET only");
    let (status, body) = http.get("/api/nothing/here", None);
    assert_eq!(status, 404);
    assert!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"].is_string());

    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Plain HTTP/1.1 to the program, one request a connection (no client library in the tests).
struct Http {
    port: u16,
}

impl Http {
    fn request(&self, head: &str, body: &str) -> (u16, Vec<u8>) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let origin = format!("http://127.0.0.1:{}", self.port);
        write!(
            s,
            "{head}\r\nHost: 127.0.0.1:{}\r\nOrigin: {origin}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        let end = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
        let head = text(&all[..end]);
        let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(!head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{head}");
        (status, all[end..].to_vec())
    }

    fn get(&self, path: &str, cookie: Option<&str>) -> (u16, Vec<u8>) {
        let cookie = cookie.map_or(String::new(), |c| format!("\r\nCookie: gbely_arena={c}"));
        self.request(&format!("GET {path} HTTP/1.1{cookie}"), "")
    }

    fn post(&self, path: &str, cookie: &str, form: &str) -> (u16, Vec<u8>) {
        let head = format!(
            "POST {path} HTTP/1.1\r\nCookie: gbely_arena={cookie}\r\nContent-Type: application/x-www-form-urlencoded"
        );
        self.request(&head, form)
    }
}
