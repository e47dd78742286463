//! The league's report: its standings, pairs, rank confidence, gauntlet and matches as one
//! self-contained HTML page.

use std::path::Path;

use super::play::MatchRow;
use crate::tournament::{Gauntlet, Standing, Standings};

/// A gauntlet's tables as HTML, for [`html_report`]'s page.
pub fn gauntlet_html(g: &Gauntlet) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let elo = |x: Option<f64>, high: bool| match x {
        Some(x) => format!("{:+.0}", x.round() + 0.0),
        None if high => "+∞".into(),
        None => "−∞".into(),
    };
    let mut h = format!(
        "<table><caption>Gauntlet: {} against the field, each opponent and each map</caption><tr><th class=n>against</th><th>played</th><th>W</th><th>D</th><th>L</th><th>score</th><th>Elo [95 %]</th></tr>",
        esc(&g.candidate)
    );
    for l in std::iter::once(&g.field).chain(&g.per_opponent).chain(&g.per_map) {
        let centre = match l.elo {
            Some(e) => format!("{:+.0}", e.round() + 0.0),
            None if l.wins == l.played && l.played > 0 => "all won".into(),
            None if l.played > 0 => "all lost".into(),
            None => "—".into(),
        };
        h.push_str(&format!(
            "<tr><td class=n>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} %</td><td>{centre} [{}, {}]</td></tr>",
            esc(&l.against), l.played, l.wins, l.draws, l.losses, 100.0 * l.score, elo(l.low, false), elo(l.high, true)
        ));
    }
    h.push_str("</table>");
    h
}

/// The standings as a self-contained HTML page (no scripts, no network).
/// `viewer` gives the link to a match's viewer page, where there is one.
pub fn html_report(
    title: &str,
    s: &Standings,
    rows: &[MatchRow],
    viewer: &dyn Fn(&MatchRow) -> Option<String>,
) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let mut h = String::new();
    h.push_str("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
    );
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    h.push_str(&format!("<title>{}</title>", esc(title)));
    h.push_str("<style>body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}th{background:#f3f3f3}td.n,th.n{text-align:left}caption{text-align:left;font-weight:bold;margin-bottom:.3em}</style></head><body>");
    h.push_str(&format!("<h1>{}</h1>", esc(title)));
    if let Some(g) = &s.gauntlet {
        h.push_str(&gauntlet_html(g));
    }
    let standings_table = |h: &mut String, caption: &str, rows: &[Standing]| {
        h.push_str(&format!("<table><caption>{}</caption><tr><th>rank</th><th class=n>agent</th><th>played</th><th>W</th><th>D</th><th>L</th><th>mean share</th><th>Elo [95 %]</th><th>violations</th><th>disqualified</th></tr>", esc(caption)));
        for r in rows {
            h.push_str(&format!(
                "<tr><td>{}</td><td class=n title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2} %</td><td>{:+.0} [{:+.0}, {:+.0}]</td><td>{}</td><td>{}</td></tr>",
                r.rank, esc(&r.id), esc(&r.name), r.played, r.wins, r.draws, r.losses, r.mean_share, r.rating.round() + 0.0,
                (r.rating - 1.96 * r.uncertainty).round() + 0.0, (r.rating + 1.96 * r.uncertainty).round() + 0.0, r.violations, r.disqualified
            ));
        }
        h.push_str("</table>");
    };
    standings_table(&mut h, "Standings", &s.standings);
    h.push_str("<table><caption>Pairs: wins–draws–losses of the row against the column</caption><tr><th></th>");
    for r in &s.standings {
        h.push_str(&format!("<th>{}</th>", esc(&r.name)));
    }
    h.push_str("</tr>");
    for (i, r) in s.standings.iter().enumerate() {
        h.push_str(&format!("<tr><th class=n>{}</th>", esc(&r.name)));
        for (j, c) in s.matrix[i].iter().enumerate() {
            if i == j {
                h.push_str("<td>—</td>");
            } else {
                h.push_str(&format!("<td>{}–{}–{}</td>", c[0], c[1], c[2]));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table><table><caption>Rank confidence: the probability that the row is stronger than the column (LOS)</caption><tr><th></th>");
    for r in &s.standings {
        h.push_str(&format!("<th>{}</th>", esc(&r.name)));
    }
    h.push_str("</tr>");
    for (i, r) in s.standings.iter().enumerate() {
        h.push_str(&format!("<tr><th class=n>{}</th>", esc(&r.name)));
        for (j, p) in s.los[i].iter().enumerate() {
            if i == j {
                h.push_str("<td>—</td>");
            } else {
                h.push_str(&format!("<td>{:.1} %</td>", 100.0 * p));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    for m in &s.per_map {
        standings_table(&mut h, &format!("On {}", m.map), &m.standings);
    }
    h.push_str("<table><caption>Matches</caption><tr><th class=n>map</th><th class=n>seat 0</th><th class=n>seat 1</th><th>game</th><th>cells</th><th>shares</th><th class=n>ended by</th><th>rounds</th><th class=n>replay</th></tr>");
    for m in rows {
        let share = |x: Option<f64>| x.map_or("DQ".to_string(), |v| format!("{v:.2} %"));
        let link = viewer(m).map_or("—".to_string(), |href| format!("<a href=\"{}\">view</a>", esc(&href)));
        h.push_str(&format!(
            "<tr><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{} : {}</td><td>{} : {}</td><td class=n>{}</td><td>{}</td><td class=n>{link}</td></tr>",
            esc(&m.map), esc(&m.seat0), esc(&m.seat1), m.game, m.cells[0], m.cells[1], share(m.score[0]), share(m.score[1]), m.ended_by.wire(), m.rounds
        ));
    }
    h.push_str("</table></body></html>\n");
    h
}

/// A gauntlet's lines as CSV (`--csv`: `FILE.gauntlet.csv`).
pub fn write_gauntlet_csv(path: &Path, g: &Gauntlet) -> std::io::Result<()> {
    let mut s = String::from("kind,against,played,wins,draws,losses,score,elo,low,high\n");
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    let rows = std::iter::once(("field", &g.field))
        .chain(g.per_opponent.iter().map(|l| ("opponent", l)))
        .chain(g.per_map.iter().map(|l| ("map", l)));
    for (kind, l) in rows {
        s.push_str(&format!(
            "{kind},{},{},{},{},{},{:.6},{},{},{}\n",
            q(&l.against),
            l.played,
            l.wins,
            l.draws,
            l.losses,
            l.score,
            opt(l.elo),
            opt(l.low),
            opt(l.high)
        ));
    }
    std::fs::write(path, s)
}

/// Every match as CSV (`--csv`).
pub fn write_csv(path: &Path, rows: &[MatchRow]) -> std::io::Result<()> {
    let mut s = String::from(
        "map,seat0,seat1,game,cells0,cells1,score0,score1,tiebreak0,tiebreak1,disqualified0,disqualified1,violations0,violations1,ended_by,rounds,seconds\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let optu = |x: Option<u32>| x.map_or(String::new(), |v| v.to_string());
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3}\n",
            q(&r.map),
            q(&r.seat0),
            q(&r.seat1),
            r.game,
            r.cells[0],
            r.cells[1],
            opt(r.score[0]),
            opt(r.score[1]),
            optu(r.tiebreak[0]),
            optu(r.tiebreak[1]),
            r.disqualified[0],
            r.disqualified[1],
            r.violations[0],
            r.violations[1],
            r.ended_by.wire(),
            r.rounds,
            r.seconds
        ));
    }
    std::fs::write(path, s)
}
