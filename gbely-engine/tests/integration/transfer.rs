//! `gbely transfer`: the report's structure and sane values, in CI time (few maps, few rounds).

use std::process::Command;

use serde_json::Value;

use crate::common::scratch;

#[test]
fn the_report_has_a_row_per_setting_and_council_level_with_shares_and_intervals_that_hold_their_means() {
    let dir = scratch("report");
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["transfer", "expander", "--maps", "3", "--rounds", "12", "--size", "40", "--json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Progress on stderr: a line per match, 3 levels × (1 reference + 3 final maps).
    assert_eq!(stderr.lines().filter(|l| l.starts_with('[')).count(), 12, "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["agent"], "expander");
    assert_eq!(report["final_maps"].as_array().unwrap().len(), 3);
    let rows = report["rows"].as_array().unwrap();
    let keys: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["setting"].as_str().unwrap(), r["council"].as_str().unwrap())).collect();
    assert_eq!(
        keys,
        [
            ("reference", "council:easy"),
            ("reference", "council"),
            ("reference", "council:strong"),
            ("final", "council:easy"),
            ("final", "council"),
            ("final", "council:strong"),
        ]
    );
    for r in rows {
        let mean = r["mean_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&mean), "{r}");
        let shares: Vec<f64> = r["matches"].as_array().unwrap().iter().map(|m| m["share"].as_f64().unwrap()).collect();
        assert!(shares.iter().all(|s| (0.0..=1.0).contains(s) && *s > 0.0), "{r}");
        assert!((shares.iter().sum::<f64>() / shares.len() as f64 - mean).abs() < 1e-12, "{r}");
        if r["setting"] == "reference" {
            assert_eq!(r["maps"], 1);
            assert_eq!(r["interval"], Value::Null, "one map, no interval: {r}");
            assert_eq!(r["mean_rank"], Value::Null);
        } else {
            assert_eq!(r["maps"], 3);
            let [lo, hi] = [0, 1].map(|i| r["interval"][i].as_f64().unwrap());
            assert!(0.0 <= lo && lo <= mean && mean <= hi && hi <= 1.0, "{r}");
            let rank = r["mean_rank"].as_f64().unwrap();
            assert!((1.0..=8.0).contains(&rank), "{r}");
        }
        assert_eq!(r["disqualified"], 0, "{r}");
    }
}

#[test]
fn a_missing_agent_and_no_maps_are_refused_in_one_line() {
    let dir = scratch("refused");
    for (args, want) in [
        (&["transfer", "missing.py"][..], "`missing.py` not found"),
        (&["transfer", "expander", "--maps", "0"][..], "--maps"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_gbely")).args(args).current_dir(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {err}");
        assert!(err.starts_with("gbely: ") && err.contains(want) && err.lines().count() == 1, "{args:?}: {err}");
    }
}
