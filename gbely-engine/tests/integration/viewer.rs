//! The replay viewer in a real headless browser (Debian's `chromium`): it renders the map with
//! the owners' colours where the replay says, stepping to round N shows the state the replay
//! holds for round N, and the page makes no network request and logs no error.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agents::Expander;
use gbely_council::Council;
use gbely_engine::game::{play, PlayOptions};
use gbely_engine::recorder::write_replay;
use gbely_engine::replays::frames;
use gbely_engine::runner::player::{DecidePlayer, Player};
use gbely_engine::sim::MatchConfig;
use serde_json::Value;

use crate::common::scratch;

fn chromium() -> &'static str {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return c;
        }
    }
    panic!("the viewer tests need Debian's `chromium` (apt-get install chromium; ./run-tests installs it)");
}

/// Runs headless Chromium on a page; returns (stdout, stderr).
fn browse(args: &[&str], url: &str, dir: &Path) -> (String, String) {
    let profile = dir.join("profile");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--virtual-time-budget=15000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Console errors, refused or failed requests in Chromium's log.
fn problems(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            (l.contains("CONSOLE") && !l.contains("Autofill")) || l.contains("net::ERR") || l.contains("Refused to")
        })
        .map(String::from)
        .collect()
}

fn state_of(dom: &str) -> Value {
    let start = dom.find("<pre id=\"state\"").expect("the state element");
    let body = &dom[start..];
    let open = body.find('>').unwrap() + 1;
    let close = body.find("</pre>").unwrap();
    let text = body[open..close].replace("&quot;", "\"").replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("state JSON: {e}: {}", &text[..text.len().min(200)]))
}

fn make_replay(dir: &Path) -> (PathBuf, gbely_world::Replay) {
    let map = Arc::new(gbely_world::generate_duel("viewer", 30, 30).unwrap());
    let mut a = DecidePlayer::new("expander", Expander::default());
    let mut b = DecidePlayer::new("council", Council::new());
    let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
    let rec = play(map, &mut players, PlayOptions { config: MatchConfig { rounds: 60 }, record: true }, &mut ());
    let path = dir.join("m.json.gz");
    let replay = rec.replay.unwrap();
    write_replay(&path, &replay).unwrap();
    (path, replay)
}

fn view(dir: &Path, replay: &Path) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_gbely")).args(["replay", "view"]).arg(replay).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = dir.join("m.html");
    assert!(html.exists(), "{}", String::from_utf8_lossy(&out.stdout));
    html
}

#[test]
fn stepping_to_round_n_shows_the_state_the_replay_holds() {
    let dir = scratch("state");
    let (path, replay) = make_replay(&dir);
    let html = view(&dir, &path);
    let map = replay.map.to_map().unwrap();
    let want = frames(&replay, &map).unwrap();
    for round in [0u32, 17, 59] {
        let url = format!("file://{}#round={round}", html.display());
        let (dom, stderr) = browse(&["--dump-dom"], &url, &dir);
        assert!(problems(&stderr).is_empty(), "round {round}: {:?}", problems(&stderr));
        let st = state_of(&dom);
        assert_eq!(st["round"], round, "the page stepped to round {round}");
        let owners: String = want[round as usize + 1]
            .owner
            .iter()
            .map(|&o| if o < 0 { '.' } else { (b'0' + o as u8) as char })
            .collect();
        assert_eq!(st["owners"].as_str().unwrap(), owners, "round {round}: owners");
        let units = st["units100"].as_array().unwrap();
        for (i, u) in units.iter().enumerate() {
            let shown = u.as_f64().unwrap() / 100.0;
            let truth = want[round as usize + 1].units[i];
            assert!(
                (shown - truth).abs() <= 0.011,
                "round {round}, cell {i}: the page shows {shown}, the replay holds {truth}"
            );
        }
    }
}

fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let mut rgb = Vec::with_capacity((info.width * info.height * 3) as usize);
    for px in buf[..info.buffer_size()].chunks(channels) {
        rgb.extend_from_slice(&px[..3]);
    }
    (info.width, info.height, rgb)
}

fn hex(c: &str) -> [i32; 3] {
    let v = i32::from_str_radix(c.trim_start_matches('#'), 16).unwrap();
    [v >> 16 & 255, v >> 8 & 255, v & 255]
}

#[test]
fn the_map_is_drawn_with_the_owners_colours_where_the_replay_says() {
    let dir = scratch("shot");
    let (path, replay) = make_replay(&dir);
    let html = view(&dir, &path);
    let round = 30u32;
    // The cells alone: no commands drawn over them.
    let url = format!("file://{}#round={round}&zoom=12&cmds=none", html.display());
    let (dom, _) = browse(&["--dump-dom", "--window-size=1400,1000"], &url, &dir);
    let st = state_of(&dom);
    let shot = dir.join("shot.png");
    let (_, stderr) = browse(&[&format!("--screenshot={}", shot.display()), "--window-size=1400,1000"], &url, &dir);
    assert!(problems(&stderr).is_empty(), "{:?}", problems(&stderr));
    let (w, _h, rgb) = decode_png(&shot);
    let canvas = &st["canvas"];
    let (x0, y0, cs) = (canvas["x"].as_f64().unwrap(), canvas["y"].as_f64().unwrap(), canvas["cs"].as_f64().unwrap());
    assert_eq!(cs, 12.0);
    let seat_colors: Vec<[i32; 3]> =
        st["colors"].as_array().unwrap().iter().map(|c| hex(c.as_str().unwrap())).collect();
    let terrain: Vec<(char, [i32; 3])> = st["terrain"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.chars().next().unwrap(), hex(v.as_str().unwrap())))
        .collect();
    let map = replay.map.to_map().unwrap();
    let want = &frames(&replay, &map).unwrap()[round as usize + 1];
    let mut palette: Vec<(String, [i32; 3])> =
        seat_colors.iter().enumerate().map(|(k, c)| (format!("seat {k}"), *c)).collect();
    palette.extend(terrain.iter().map(|(t, c)| (format!("terrain {t}"), *c)));
    let mut distinct = std::collections::BTreeSet::new();
    let g = map.grid();
    for cell in g.cells() {
        let (r, c) = g.row_col(cell);
        let (px, py) = ((x0 + c as f64 * cs + cs * 0.3) as u32, (y0 + r as f64 * cs + cs * 0.3) as u32);
        let i = ((py * w + px) * 3) as usize;
        let p = [rgb[i] as i32, rgb[i + 1] as i32, rgb[i + 2] as i32];
        distinct.insert(p);
        let nearest = palette.iter().min_by_key(|(_, q)| (0..3).map(|k| (p[k] - q[k]).pow(2)).sum::<i32>()).unwrap();
        let expected = match want.owner[cell.index()] {
            -1 => format!(
                "terrain {}",
                match map.terrain(cell) {
                    gbely_rules::Terrain::Meadow => '.',
                    gbely_rules::Terrain::Hill => '^',
                    gbely_rules::Terrain::River => '~',
                }
            ),
            k => format!("seat {k}"),
        };
        assert_eq!(nearest.0, expected, "cell {} at pixel ({px}, {py}) is {p:?}", g.id(cell));
    }
    assert!(distinct.len() >= 4, "the screenshot is not blank: {} colours", distinct.len());
}

#[test]
fn the_page_is_self_contained_and_the_check_catches_network_use() {
    let dir = scratch("net");
    let (path, _) = make_replay(&dir);
    let html = view(&dir, &path);
    let text = std::fs::read_to_string(&html).unwrap();
    let data_start = text.find("id=\"gbely-data\"").unwrap();
    let data_end = data_start + text[data_start..].find("</script>").unwrap();
    let outside = format!("{}{}", &text[..data_start], &text[data_end..]);
    assert!(
        !outside.contains("http:") && !outside.contains("https:") && !outside.contains(" src="),
        "external references"
    );
    let (_, stderr) = browse(&["--dump-dom"], &format!("file://{}", html.display()), &dir);
    assert!(problems(&stderr).is_empty(), "{:?}", problems(&stderr));
    // The same checks flag a page that tries the network under the viewer's policy.
    let csp = &text[text.find("<meta http-equiv").unwrap()..];
    let csp = &csp[..csp.find('>').unwrap() + 1];
    let bad = dir.join("bad.html");
    std::fs::write(&bad, format!("<!doctype html><html><head>{csp}</head><body><script>fetch('http://127.0.0.1:9/x').catch(e => console.error('failed', e));</script></body></html>")).unwrap();
    let (_, stderr) = browse(&["--dump-dom"], &format!("file://{}", bad.display()), &dir);
    assert!(!problems(&stderr).is_empty(), "the detector must see the refused request:\n{stderr}");
}
