//! The organisers' audit log: each act an organiser does (a re-judge, a download, the final, a
//! worker's token) as one [`Act`]. The log keeps it three ways: `what` and `detail` in English
//! (for whoever reads the database), and the act itself (`act`, JSON), from which `/org` says it
//! again in the reader's language. An entry written before the act was kept shows as stored.

use serde::{Deserialize, Serialize};

use crate::i18n::Lang;

/// What an organiser did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "act", rename_all = "snake_case")]
pub enum Act {
    /// Sent to the judges again: one submission, or every current one (`count` of them).
    Rejudge { submission: Option<i64>, count: u64 },
    /// Downloaded a submission's file.
    Download { submission: i64, email: String },
    /// Compared two submissions' files side by side (the similarity review).
    Compare { first: i64, first_email: String, second: i64, second_email: String },
    /// Started the final.
    RunFinal { run: i64 },
    /// Set aside a final cut off, to run it again from its start.
    SetAsideFinal { run: i64 },
    /// Continued a cut-off final from its last complete round.
    ResumeFinal { run: i64, round: u64 },
    /// Opened the public results before the deadline.
    OpenResults,
    /// Issued a token for an HTTP worker.
    IssueWorker { name: String },
    /// Revoked a worker's token.
    RevokeWorker { worker: i64 },
    /// Re-judged what a worker disqualified by timeouts.
    RejudgeTimeouts { worker: i64, submissions: Vec<i64> },
}

impl Act {
    /// The act and its detail in `l`.
    pub fn said(&self, l: Lang) -> (String, String) {
        match self {
            Act::Rejudge { submission: Some(s), .. } => {
                (tr!(l, "audit-rejudge"), tr!(l, "audit-rejudge-one", submission = *s))
            }
            Act::Rejudge { submission: None, count } => {
                (tr!(l, "audit-rejudge"), tr!(l, "audit-rejudge-all", count = *count))
            }
            Act::Download { submission, email } => (
                tr!(l, "audit-download"),
                tr!(l, "audit-download-detail", submission = *submission, email = email.as_str()),
            ),
            Act::Compare { first, first_email, second, second_email } => (
                tr!(l, "audit-compare"),
                tr!(
                    l,
                    "audit-compare-detail",
                    first = *first,
                    first_email = first_email.as_str(),
                    second = *second,
                    second_email = second_email.as_str()
                ),
            ),
            Act::RunFinal { run } => (tr!(l, "audit-run-final"), tr!(l, "audit-final", run = *run)),
            Act::SetAsideFinal { run } => {
                (tr!(l, "audit-set-aside-final"), tr!(l, "audit-set-aside-detail", run = *run))
            }
            Act::ResumeFinal { run, round } => {
                (tr!(l, "audit-resume-final"), tr!(l, "audit-resume-detail", run = *run, round = *round))
            }
            Act::OpenResults => (tr!(l, "audit-open-results"), tr!(l, "audit-open-results-detail")),
            Act::IssueWorker { name } => (tr!(l, "audit-issue-worker"), name.clone()),
            Act::RevokeWorker { worker } => (tr!(l, "audit-revoke-worker"), tr!(l, "audit-worker", worker = *worker)),
            Act::RejudgeTimeouts { worker, submissions } => {
                let listed = submissions.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
                (
                    tr!(l, "audit-rejudge-timeouts"),
                    tr!(l, "audit-rejudge-timeouts-detail", worker = *worker, submissions = listed),
                )
            }
        }
    }

    /// The act as the log's `act` column keeps it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an act is plain data")
    }
}

/// An entry of the log in `l`: its act said again, or (an entry from before acts were kept, or
/// one this version does not know) `what` and `detail` as stored.
pub fn shown(l: Lang, what: &str, detail: &str, act: &str) -> (String, String) {
    match serde_json::from_str::<Act>(act) {
        Ok(act) => act.said(l),
        Err(_) => (what.to_string(), detail.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_act_is_kept_in_english_and_shown_in_the_readers_language() {
        let act = Act::Download { submission: 12, email: "ana@mail.example".into() };
        assert_eq!(
            act.said(Lang::En),
            ("download".to_string(), "the file of submission 12 (ana@mail.example)".to_string())
        );
        let kept = act.to_json();
        assert_eq!(kept, r#"{"act":"download","submission":12,"email":"ana@mail.example"}"#);
        assert_eq!(
            shown(Lang::Sk, "download", "…", &kept),
            ("stiahnutie".to_string(), "súbor riešenia 12 (ana@mail.example)".to_string())
        );
        let timeouts = Act::RejudgeTimeouts { worker: 2, submissions: vec![4, 9] };
        assert_eq!(timeouts.said(Lang::En).1, "worker 2: submissions 4, 9");
        let resumed = Act::ResumeFinal { run: 3, round: 40 };
        assert_eq!(resumed.said(Lang::En), ("resume the final".into(), "final 3 from round 40".into()));
        assert_eq!(resumed.said(Lang::Sk).1, "finále 3 od 40. kola");
        // An entry from before: as stored.
        assert_eq!(shown(Lang::Sk, "re-judge", "all", ""), ("re-judge".to_string(), "all".to_string()));
        assert_eq!(shown(Lang::Sk, "x", "y", r#"{"act":"unknown"}"#), ("x".to_string(), "y".to_string()));
    }

    #[test]
    fn every_act_reads_back_as_itself() {
        let acts = [
            Act::Rejudge { submission: Some(5), count: 1 },
            Act::Rejudge { submission: None, count: 7 },
            Act::Download { submission: 1, email: "a@b".into() },
            Act::Compare { first: 1, first_email: "a@b".into(), second: 2, second_email: "c@d".into() },
            Act::RunFinal { run: 1 },
            Act::SetAsideFinal { run: 1 },
            Act::ResumeFinal { run: 1, round: 2 },
            Act::OpenResults,
            Act::IssueWorker { name: "hall-pc-3".into() },
            Act::RevokeWorker { worker: 3 },
            Act::RejudgeTimeouts { worker: 3, submissions: vec![] },
        ];
        for act in acts {
            assert_eq!(serde_json::from_str::<Act>(&act.to_json()).unwrap(), act);
            for l in Lang::ALL {
                let (what, detail) = act.said(l);
                assert!(!what.is_empty() && !detail.is_empty(), "{act:?} in {l:?}");
            }
        }
    }
}
