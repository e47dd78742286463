//! The competition's configuration: one TOML file (`gbely arena example` prints a commented one).
//!
//! Paths in it are relative to the file's folder. Times are wall-clock times of the competition's
//! time zone (`2026-11-15 23:59:59`), turned into instants once, at load, by the zone's rules
//! (daylight saving included): an upload is accepted from the second `testing` names through the
//! second `deadline` names, both included.

use std::path::{Path, PathBuf};

use gbely_engine::app::requests::MatchSettings;
use gbely_engine::app::runs::agent_spec::{AgentSpec, Example};
use gbely_engine::limits::{Defaults, TimeLimit};
use gbely_engine::runner::sandbox::SandboxMode;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::Deserialize;

use super::i18n::Lang;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    time_zone: String,
    /// The address participants reach the site at: the links of e-mails; `https://` makes the
    /// session cookie `Secure`.
    public_url: String,
    #[serde(default)]
    organisers: Vec<String>,
    #[serde(default = "default_data")]
    data: PathBuf,
    /// `sqlite` (a file in the data folder) or a `postgres://` URL.
    #[serde(default = "default_database")]
    database: String,
    #[serde(default = "default_port")]
    port: u16,
    /// The similarity review's base file (MOSS's `-b`): code every participant was given (the
    /// template), whose fingerprints are left out of every comparison.
    #[serde(default)]
    review_base: Option<PathBuf>,
    /// The site's language for a browser that asks for none of the arena's (`sk` or `en`), and
    /// the e-mails' for a participant who has not chosen one.
    #[serde(default = "default_language")]
    language: String,
    /// The organisers' rules of the competition, in Markdown, served at `/rules`.
    #[serde(default)]
    rules: Option<PathBuf>,
    phases: Phases,
    #[serde(default)]
    leaderboard: Leaderboard,
    #[serde(rename = "final", default)]
    final_: Final,
    #[serde(default)]
    judge: Judge,
    #[serde(default)]
    limits: Limits,
    mail: MailFile,
}

fn default_data() -> PathBuf {
    PathBuf::from("arena-data")
}
fn default_database() -> String {
    "sqlite".into()
}
fn default_language() -> String {
    "sk".to_string()
}

fn default_port() -> u16 {
    8080
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Phases {
    /// Sign-in opens (the rules and the SDK are out).
    registration: String,
    /// Uploads are accepted and judged from this second on.
    testing: String,
    /// The last second an upload is accepted.
    deadline: String,
    /// The live final (shown on the site; the organiser starts it).
    #[serde(rename = "final")]
    final_: String,
}

/// The leaderboard's match: one submission against `opponent` on `map`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Leaderboard {
    /// `gbely` (the reference map), `seed:TEXT` or a `.map` file.
    pub map: String,
    /// `council`, an agent file or a `cmd:` program.
    pub opponent: AgentSpec,
    pub rounds: u32,
}

impl Default for Leaderboard {
    fn default() -> Leaderboard {
        Leaderboard { map: "gbely".into(), opponent: AgentSpec::COUNCIL, rounds: gbely_rules::constants::ROUNDS }
    }
}

/// The final: the top eight on a hidden map against the Council's final form.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Final {
    /// A final `.map` file (its centre: the reinforcements) or `seed:TEXT`; never published.
    pub map: String,
    /// The side of a generated map.
    pub size: u32,
    /// The Council's seat: `council`, an agent file or a `cmd:` program; never published.
    pub opponent: AgentSpec,
    /// Rounds a second on the projection.
    pub rate: f64,
    /// Who takes the seats the leaderboard cannot fill (fewer than eight scored).
    pub fill: AgentSpec,
    pub rounds: u32,
}

impl Default for Final {
    fn default() -> Final {
        Final {
            map: "seed:final".into(),
            size: 90,
            opponent: AgentSpec::COUNCIL,
            rate: 1.0,
            fill: AgentSpec::Example(Example::Template),
            rounds: gbely_rules::constants::ROUNDS,
        }
    }
}

/// How submissions are judged.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Judge {
    /// Matches judged at once in the server's process (0: only by `gbely arena worker`).
    pub workers: usize,
    /// Seconds a round (SPEC §8: 2): more than 0, at most 3600; refused when the file is read
    /// otherwise.
    pub time_limit: TimeLimit,
    /// `require` (the default: an agent never runs outside the sandbox), `auto` or `off`; another
    /// word is refused when the file is read.
    pub sandbox: SandboxMode,
    /// Rounds of the check's test match.
    pub check_rounds: u32,
    /// Seconds a worker holds a job without renewing it; a job whose worker died is judged again
    /// after it.
    pub lease_seconds: u64,
    /// The share of the server's own speed a worker over HTTP must measure to be given jobs
    /// (`speed.rs`; 0: any).
    pub min_speed: f64,
    pub python: Option<String>,
}

impl Default for Judge {
    fn default() -> Judge {
        Judge {
            workers: 1,
            time_limit: Defaults::TIME_LIMIT,
            sandbox: SandboxMode::Require,
            check_rounds: 10,
            lease_seconds: 60,
            min_speed: 0.5,
            python: None,
        }
    }
}

impl Judge {
    /// How a match of `rounds` rounds is played here (the leaderboard's, the final): the one
    /// place the arena turns its configuration into match settings.
    pub fn settings(&self, rounds: u32) -> MatchSettings {
        MatchSettings {
            rounds,
            time_limit: self.time_limit,
            memory_limit: Defaults::MEMORY_LIMIT,
            sandbox: self.sandbox,
            python: self.python.clone(),
        }
    }
}

/// Limits on what users send.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    pub upload_bytes: u64,
    /// Uploads an identity may make in an hour.
    pub uploads_per_hour: u32,
    /// Seconds an upload's body may take to arrive (a slow body is refused, and an upload
    /// counts when its file has arrived whole).
    pub upload_seconds: u32,
    /// Sign-in e-mails one requester (a network address) may have sent to one address in an hour.
    pub signin_emails_per_hour: u32,
    /// Sign-in e-mails one requester may have sent in an hour, to any addresses.
    pub signin_emails_per_hour_requester: u32,
    /// Sign-in e-mails the whole site sends in an hour to addresses that have never signed in
    /// (a participant who has signed in before is never stopped by it).
    pub signin_emails_per_hour_total: u32,
    /// The header a proxy in front of the server writes the client's address into (e.g.
    /// `X-Forwarded-For`: its last address is taken); empty: the connection's own address is
    /// the requester's.
    pub requester_header: String,
    /// Minutes a sign-in link holds.
    pub signin_minutes: u32,
    /// Days a session holds.
    pub session_days: u32,
    /// Seconds a connection has to send a request's head whole, from its opening or the
    /// previous answer's end (slow senders and idle connections are closed then).
    pub header_seconds: u64,
    /// Seconds a connection may stay with no byte moving either way before it is closed.
    pub idle_seconds: u64,
    /// Connections served at once; 0: half the descriptors the process may open (at most 8192).
    pub connections: usize,
}

impl Limits {
    /// The server's connection limits these make.
    pub fn connection_limits(&self) -> gbely_engine::app::web::conn::Limits {
        use gbely_engine::app::web::conn;
        let descriptors = conn::raise_descriptor_limit();
        let cap = if self.connections == 0 { conn::default_connections(descriptors) } else { self.connections };
        conn::Limits {
            header_read: std::time::Duration::from_secs(self.header_seconds),
            idle: std::time::Duration::from_secs(self.idle_seconds),
            connections: cap,
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            upload_bytes: gbely_rules::constants::MAX_SUBMISSION_BYTES,
            uploads_per_hour: 30,
            upload_seconds: 60,
            signin_emails_per_hour: 5,
            signin_emails_per_hour_requester: 20,
            signin_emails_per_hour_total: 1000,
            requester_header: String::new(),
            signin_minutes: 20,
            session_days: 30,
            header_seconds: gbely_engine::app::web::conn::HEADER_READ.as_secs(),
            idle_seconds: gbely_engine::app::web::conn::IDLE.as_secs(),
            connections: 0,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MailFile {
    /// `smtp://host:port` (plain, for a local relay), `smtp://host:587?tls=required` (STARTTLS),
    /// `smtps://host:465`, with `user@` where the server wants a login; or `log`: e-mails are
    /// printed to the server's output (a rehearsal).
    url: String,
    from: String,
    /// The environment variable holding the SMTP password (never the file).
    #[serde(default)]
    password_env: Option<String>,
}

/// Where e-mails go.
#[derive(Clone, Debug)]
pub struct Mail {
    pub url: String,
    pub from: String,
    pub password: Option<String>,
}

/// The competition's phases as instants.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub registration: Timestamp,
    pub testing: Timestamp,
    pub deadline: Timestamp,
    pub final_: Timestamp,
}

/// Where the competition is in its phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    BeforeRegistration,
    Registration,
    Testing,
    Closed,
    Final,
}

impl Schedule {
    pub fn phase(&self, now: Timestamp) -> Phase {
        // Seconds count: an instant within the deadline's second is still that second.
        let s = now.as_second();
        if s < self.registration.as_second() {
            Phase::BeforeRegistration
        } else if s < self.testing.as_second() {
            Phase::Registration
        } else if s <= self.deadline.as_second() {
            Phase::Testing
        } else if s < self.final_.as_second() {
            Phase::Closed
        } else {
            Phase::Final
        }
    }
}

/// A loaded, checked configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub file: PathBuf,
    pub name: String,
    pub tz: TimeZone,
    pub tz_name: String,
    pub public_url: String,
    pub organisers: Vec<String>,
    pub data: PathBuf,
    pub database: String,
    pub port: u16,
    /// The similarity review's base file (the template), if any: checked to exist.
    pub review_base: Option<PathBuf>,
    /// The language of a browser that asks for none of ours, and of e-mails by default.
    pub language: Lang,
    /// The rules page's Markdown file, if the configuration names one (it may be missing:
    /// then there is no rules page).
    pub rules: Option<PathBuf>,
    pub schedule: Schedule,
    pub leaderboard: Leaderboard,
    pub final_: Final,
    pub judge: Judge,
    pub limits: Limits,
    pub mail: Mail,
}

/// What is wrong with a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("the configuration {path}: {why}")]
    Invalid { path: String, why: String },
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read { path: shown.clone(), error })?;
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Config::parse(&text, dir, path).map_err(|why| ConfigError::Invalid { path: shown, why })
    }

    /// Parses `text`, its relative paths taken from `dir`.
    pub fn parse(text: &str, dir: &Path, file: &Path) -> Result<Config, String> {
        let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let tz = TimeZone::get(&f.time_zone).map_err(|e| format!("time_zone `{}`: {e}", f.time_zone))?;
        let at = |key: &str, v: &str| -> Result<Timestamp, String> {
            let civil: DateTime = v
                .trim()
                .parse()
                .map_err(|e| format!("phases.{key} `{v}`: {e} (write it as 2026-11-15 23:59:59, in the time zone)"))?;
            tz.to_ambiguous_zoned(civil)
                .compatible()
                .map(|z| z.timestamp())
                .map_err(|e| format!("phases.{key} `{v}`: {e}"))
        };
        let schedule = Schedule {
            registration: at("registration", &f.phases.registration)?,
            testing: at("testing", &f.phases.testing)?,
            deadline: at("deadline", &f.phases.deadline)?,
            final_: at("final", &f.phases.final_)?,
        };
        if !(schedule.registration <= schedule.testing
            && schedule.testing <= schedule.deadline
            && schedule.deadline < schedule.final_)
        {
            return Err("phases: registration ≤ testing ≤ deadline < final, in that order".into());
        }
        let url = f.public_url.trim_end_matches('/').to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("public_url `{url}`: an http:// or https:// address"));
        }
        let organisers: Vec<String> = f.organisers.iter().map(|o| normal_email(o)).collect::<Result<_, _>>()?;
        let rel = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { dir.join(p) };
        let agent = |key: &str, spec: AgentSpec| -> Result<AgentSpec, String> {
            // A file named relative to the configuration; built-ins and commands as they are.
            match spec {
                AgentSpec::File(path) => {
                    let p = rel(&path);
                    if !p.is_file() {
                        return Err(format!("{key} `{}`: no such file ({})", path.display(), p.display()));
                    }
                    Ok(AgentSpec::File(p))
                }
                AgentSpec::Human => Err(format!("{key}: `human` plays on a page of `gbely play`, not in the arena")),
                other => Ok(other),
            }
        };
        let file_spec = |key: &str, spec: &str| -> Result<String, String> {
            // A map file named relative to the configuration; seeds and the reference as they are.
            if spec.ends_with(".map") {
                let p = rel(Path::new(spec));
                if !p.is_file() {
                    return Err(format!("{key} `{spec}`: no such file ({})", p.display()));
                }
                return Ok(p.display().to_string());
            }
            Ok(spec.to_string())
        };
        let mut leaderboard = f.leaderboard;
        leaderboard.map = file_spec("leaderboard.map", &leaderboard.map)?;
        leaderboard.opponent = agent("leaderboard.opponent", leaderboard.opponent)?;
        let mut final_ = f.final_;
        final_.map = file_spec("final.map", &final_.map)?;
        final_.opponent = agent("final.opponent", final_.opponent)?;
        final_.fill = agent("final.fill", final_.fill)?;
        if !(final_.rate > 0.0 && final_.rate.is_finite()) {
            return Err(format!("final.rate {}: rounds a second, above 0", final_.rate));
        }
        for (key, r) in [("leaderboard.rounds", leaderboard.rounds), ("final.rounds", final_.rounds)] {
            if !(1..=gbely_engine::app::runs::MAX_ROUNDS).contains(&r) {
                return Err(format!("{key} {r}: out of range"));
            }
        }
        let judge = f.judge;
        if judge.lease_seconds < 2 {
            return Err("judge.lease_seconds: at least 2".into());
        }
        if !(judge.min_speed.is_finite() && judge.min_speed >= 0.0) {
            return Err(format!("judge.min_speed {}: a share of the server's speed, 0 or more", judge.min_speed));
        }
        for (key, v) in
            [("limits.header_seconds", f.limits.header_seconds), ("limits.idle_seconds", f.limits.idle_seconds)]
        {
            if v == 0 {
                return Err(format!("{key}: seconds, at least 1"));
            }
        }
        let password = match &f.mail.password_env {
            Some(var) => Some(std::env::var(var).map_err(|_| format!("mail.password_env: ${var} is not set"))?),
            None => None,
        };
        let review_base = match &f.review_base {
            Some(path) => {
                let p = rel(path);
                if !p.is_file() {
                    return Err(format!("review_base `{}`: no such file ({})", path.display(), p.display()));
                }
                Some(p)
            }
            None => None,
        };
        let language = Lang::parse(&f.language)
            .filter(|l| l.code() == f.language.trim())
            .ok_or_else(|| format!("language `{}`: `sk` or `en`", f.language))?;
        let rules = f.rules.as_deref().map(rel);
        let database = match f.database.as_str() {
            "sqlite" => "sqlite".to_string(),
            u if u.starts_with("postgres://") || u.starts_with("postgresql://") => u.to_string(),
            u => return Err(format!("database `{u}`: `sqlite` or a postgres:// URL")),
        };
        Ok(Config {
            file: file.to_path_buf(),
            name: f.name,
            tz,
            tz_name: f.time_zone,
            public_url: url,
            organisers,
            data: rel(&f.data),
            database,
            port: f.port,
            review_base,
            language,
            rules,
            schedule,
            leaderboard,
            final_,
            judge,
            limits: f.limits,
            mail: Mail { url: f.mail.url, from: f.mail.from, password },
        })
    }

    /// An instant as the competition's wall clock shows it.
    pub fn local(&self, t: Timestamp) -> String {
        t.to_zoned(self.tz.clone()).strftime("%Y-%m-%d %H:%M:%S %Z").to_string()
    }

    /// An instant as the competition's wall clock shows it, written as `lang` writes dates.
    pub fn local_in(&self, t: Timestamp, lang: Lang) -> String {
        lang.date(&t.to_zoned(self.tz.clone()))
    }

    pub fn is_organiser(&self, email: &str) -> bool {
        self.organisers.iter().any(|o| o == email)
    }
}

/// An e-mail address as the identity: trimmed, lower-cased; refused, with the reason, when it
/// is not one this site accepts. The rules are the common subset of RFC 5321 that mail servers
/// deliver to: ASCII only; a local part of 1–64 letters, digits and `.+-_`, with no dot at
/// either end nor two in a row; a domain of at least two labels, each 1–63 letters, digits and
/// hyphens with no hyphen at either end; 254 characters in all. Anything else would fail at the
/// mailer, or be one person under two identities.
pub fn normal_email(raw: &str) -> Result<String, String> {
    normal_email_in(raw, Lang::En)
}

/// [`normal_email`], the reason in `lang`.
pub fn normal_email_in(raw: &str, lang: Lang) -> Result<String, String> {
    let e = raw.trim();
    email_problem(e).map_or_else(
        || Ok(e.to_ascii_lowercase()),
        |why| {
            // The address as typed, shortened (by characters: never inside one).
            let shown: String = e.chars().take(80).collect();
            let more = if e.chars().nth(80).is_some() { "…" } else { "" };
            let why = why.text(lang);
            Err(tr!(lang, "email-refused", address = format!("{shown}{more}"), why = why))
        },
    )
}

/// What is wrong with an address (see [`normal_email`]).
#[derive(Debug)]
enum EmailProblem {
    NotAscii(char),
    TooLong(usize),
    NoAt,
    TwoAts,
    NoLocal,
    LocalTooLong(usize),
    LocalChar(char),
    LocalDots,
    NoDomain,
    DomainDots,
    NoDot(String),
    LabelTooLong(usize),
    DomainChar(char),
    Hyphen(String),
}

impl EmailProblem {
    fn text(&self, l: Lang) -> String {
        match self {
            EmailProblem::NotAscii(c) => tr!(l, "email-not-ascii", char = c.to_string()),
            EmailProblem::TooLong(n) => tr!(l, "email-too-long", length = *n),
            EmailProblem::NoAt => tr!(l, "email-no-at"),
            EmailProblem::TwoAts => tr!(l, "email-two-ats"),
            EmailProblem::NoLocal => tr!(l, "email-no-local"),
            EmailProblem::LocalTooLong(n) => tr!(l, "email-local-too-long", length = *n),
            EmailProblem::LocalChar(c) => tr!(l, "email-local-char", char = c.escape_debug().to_string()),
            EmailProblem::LocalDots => tr!(l, "email-local-dots"),
            EmailProblem::NoDomain => tr!(l, "email-no-domain"),
            EmailProblem::DomainDots => tr!(l, "email-domain-dots"),
            EmailProblem::NoDot(d) => tr!(l, "email-no-dot", domain = d.as_str()),
            EmailProblem::LabelTooLong(n) => tr!(l, "email-label-too-long", length = *n),
            EmailProblem::DomainChar(c) => tr!(l, "email-domain-char", char = c.escape_debug().to_string()),
            EmailProblem::Hyphen(label) => tr!(l, "email-hyphen", label = label.as_str()),
        }
    }
}

/// What is wrong with a trimmed address, if anything (see [`normal_email`]).
fn email_problem(e: &str) -> Option<EmailProblem> {
    if let Some(c) = e.chars().find(|c| !c.is_ascii()) {
        return Some(EmailProblem::NotAscii(c));
    }
    if e.len() > 254 {
        return Some(EmailProblem::TooLong(e.len()));
    }
    let Some((local, domain)) = e.split_once('@') else { return Some(EmailProblem::NoAt) };
    if domain.contains('@') {
        return Some(EmailProblem::TwoAts);
    }
    let local_chars = |c: char| c.is_ascii_alphanumeric() || ".+-_".contains(c);
    if local.is_empty() {
        return Some(EmailProblem::NoLocal);
    }
    if local.len() > 64 {
        return Some(EmailProblem::LocalTooLong(local.len()));
    }
    if let Some(c) = local.chars().find(|&c| !local_chars(c)) {
        return Some(EmailProblem::LocalChar(c));
    }
    if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
        return Some(EmailProblem::LocalDots);
    }
    if domain.is_empty() {
        return Some(EmailProblem::NoDomain);
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.iter().any(|l| l.is_empty()) {
        return Some(EmailProblem::DomainDots);
    }
    if labels.len() < 2 {
        return Some(EmailProblem::NoDot(domain.to_string()));
    }
    for label in labels {
        if label.len() > 63 {
            return Some(EmailProblem::LabelTooLong(label.len()));
        }
        if let Some(c) = label.chars().find(|&c| !(c.is_ascii_alphanumeric() || c == '-')) {
            return Some(EmailProblem::DomainChar(c));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Some(EmailProblem::Hyphen(label.to_string()));
        }
    }
    None
}

/// The commented example `gbely arena example` prints.
pub const EXAMPLE: &str = include_str!("example.toml");

#[cfg(test)]
mod tests {
    use super::*;

    fn config(phases: &str) -> Result<Config, String> {
        let text = EXAMPLE;
        let start = text.find("[phases]").unwrap();
        let end = text[start..].find("\n\n").map(|e| start + e).unwrap();
        let text = format!("{}[phases]\n{phases}{}", &text[..start], &text[end..]);
        Config::parse(&text, Path::new("."), Path::new("arena.toml"))
    }

    const PHASES: &str = "registration = \"2026-10-05 00:00:00\"\ntesting = \"2026-10-19 00:00:00\"\n\
        deadline = \"2026-11-15 23:59:59\"\nfinal = \"2026-11-27 18:00:00\"\n";

    #[test]
    fn the_example_loads() {
        let c = config(PHASES).unwrap();
        assert_eq!(c.tz_name, "Europe/Bratislava");
        assert_eq!(c.judge.time_limit.as_secs_f64(), Some(2.0));
        assert_eq!(c.limits.upload_bytes, 512 * 1024);
    }

    #[test]
    fn the_judges_sandbox_and_time_limit_are_read_typed_and_a_bad_one_is_refused_with_its_key() {
        let c = config(PHASES).unwrap();
        assert_eq!(c.judge.sandbox, SandboxMode::Require);
        assert_eq!(c.judge.settings(150).limits().sandbox, SandboxMode::Require);
        let with = |key: &str, value: &str| {
            let text = EXAMPLE.replace(&format!("\n{key} = "), &format!("\n{key} = {value}\n# was: "));
            assert_ne!(text, EXAMPLE, "{key} is in the example");
            let start = text.find("[phases]").unwrap();
            let end = text[start..].find("\n\n").map(|e| start + e).unwrap();
            let text = format!("{}[phases]\n{PHASES}{}", &text[..start], &text[end..]);
            Config::parse(&text, Path::new("."), Path::new("arena.toml"))
        };
        assert_eq!(with("sandbox", "\"off\"").unwrap().judge.sandbox, SandboxMode::Off);
        assert_eq!(with("time_limit", "0.5").unwrap().judge.settings(3).time_limit, TimeLimit::seconds(0.5).unwrap());
        // Refused when the file is read, naming the key's line and what it may be (before, a
        // wrong sandbox word was checked here and parsed again later with a silent fallback).
        let e = with("sandbox", "\"maybe\"").unwrap_err();
        assert!(e.contains("sandbox = \"maybe\"") && e.contains("`maybe`: auto, require or off"), "{e}");
        let e = with("time_limit", "0").unwrap_err();
        assert!(e.contains("time_limit = 0") && e.contains("seconds more than 0"), "{e}");
        let e = with("time_limit", "7200").unwrap_err();
        assert!(e.contains("time_limit = 7200") && e.contains("at most 3600"), "{e}");
    }

    #[test]
    fn phases_turn_at_the_second_in_the_competitions_time_zone() {
        let c = config(PHASES).unwrap();
        // 15 November is winter time in Bratislava: UTC+1, so 23:59:59 there is 22:59:59 UTC.
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let s = c.schedule;
        assert_eq!(s.phase(t("2026-11-15T22:59:59Z")), Phase::Testing);
        assert_eq!(s.phase(t("2026-11-15T22:59:59.999Z")), Phase::Testing);
        assert_eq!(s.phase(t("2026-11-15T23:00:00Z")), Phase::Closed);
        // 19 October is summer time (UTC+2): testing opens at 22:00 UTC the day before.
        assert_eq!(s.phase(t("2026-10-18T21:59:59Z")), Phase::Registration);
        assert_eq!(s.phase(t("2026-10-18T22:00:00Z")), Phase::Testing);
        assert_eq!(s.phase(t("2026-10-04T21:59:59Z")), Phase::BeforeRegistration);
        assert_eq!(s.phase(t("2026-11-27T17:00:00Z")), Phase::Final);
        assert_eq!(s.phase(t("2026-11-27T16:59:59Z")), Phase::Closed);
    }

    #[test]
    fn phases_out_of_order_or_unreadable_are_refused_with_the_key() {
        let e = config(&PHASES.replace("2026-11-15 23:59:59", "2026-10-01 00:00:00")).unwrap_err();
        assert!(e.contains("in that order"), "{e}");
        let e = config(&PHASES.replace("2026-11-15 23:59:59", "15.11.2026")).unwrap_err();
        assert!(e.contains("phases.deadline"), "{e}");
    }

    #[test]
    fn identities_are_addresses_lower_cased() {
        assert_eq!(normal_email(" Ana@Example.COM ").unwrap(), "ana@example.com");
        for bad in ["ana", "ana@", "@example.com", "a@b", "a@@b.c", "a b@c.d", "a@b.c\r\nBcc: x@y.z", "<a@b.c>"] {
            assert!(normal_email(bad).is_err(), "{bad}");
        }
    }

    /// One address through the check: accepted as `Ok(normal)`, or refused with a reason that
    /// contains `Err(part)`.
    fn check(address: &str, expect: Result<&str, &str>) {
        match (normal_email(address), expect) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{address:?}"),
            (Err(why), Err(part)) => assert!(why.contains(part), "{address:?}: {why}"),
            (got, want) => panic!("{address:?}: got {got:?}, expected {want:?}"),
        }
    }

    #[test]
    fn addresses_are_checked_whole_with_the_reason() {
        let local64 = "a".repeat(64);
        let label63 = "d".repeat(63);
        check("a@b.c", Ok("a@b.c"));
        check("first.last+tag_x-y@mail-1.example.org", Ok("first.last+tag_x-y@mail-1.example.org"));
        check(&format!("{local64}@x.sk"), Ok(&format!("{local64}@x.sk")));
        check(&format!("a@{label63}.sk"), Ok(&format!("a@{label63}.sk")));
        // Issue 42: these passed the old check and failed at the mailer with a 502.
        check("a@b..c", Err("two in a row"));
        check(".a@b.c", Err("a dot at either end of the part before"));
        check("a.@b.c", Err("a dot at either end of the part before"));
        check("a..b@c.d", Err("two in a row"));
        check(&format!("{local64}a@x.sk"), Err("65 characters long; at most 64"));
        check(&format!("a@{label63}d.sk"), Err("64 characters long; at most 63"));
        check("a@-b.c", Err("hyphen"));
        check("a@b-.c", Err("hyphen"));
        check("a@b_c.d", Err("`_` in the domain"));
        check("a@.b.c", Err("either end of the domain"));
        check("a@b.c.", Err("either end of the domain"));
        check("a@b", Err("has no dot"));
        check("a@", Err("nothing after"));
        check("@b.c", Err("nothing before"));
        check("ab.c", Err("no `@`"));
        check("a@b@c.d", Err("more than one `@`"));
        check("a\"b@c.d", Err("`\\\"` before the `@`"));
        check(&format!("{}@{}.sk", "a".repeat(64), ["b"; 95].join(".")), Err("at most 254"));
        // Issue 42: non-ASCII made the old check panic (a byte index inside a character).
        check("é@x.sk", Err("`é` is not an ASCII character"));
        check("ana@příklad.sk", Err("`ř` is not an ASCII character"));
        check("\u{1F600}", Err("not an ASCII character"));
        // A long address is shown shortened, cut between characters.
        let long = "ž".repeat(300);
        check(&long, Err(&format!("`{}…`", "ž".repeat(80))));
    }

    #[test]
    fn no_input_makes_the_address_check_panic() {
        // Every short string over an alphabet of the characters that matter, and some at random.
        let alphabet = ['a', '@', '.', '-', 'é', '😀', ' ', '\0'];
        let mut inputs = vec![String::new()];
        for _ in 0..5 {
            inputs = inputs.iter().flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}"))).collect();
            for s in &inputs {
                let _ = normal_email(s);
            }
        }
    }
}
