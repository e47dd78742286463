//! E-mail through SMTP (lettre), or printed to the server's output (`url = "log"`).

use lettre::message::{header::ContentType, Mailbox};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{Message, SmtpTransport, Transport};

use super::config::Mail;

/// Where the site's e-mails go.
#[derive(Clone, Debug)]
pub struct Mailer {
    from: Mailbox,
    transport: Option<SmtpTransport>,
}

impl Mailer {
    pub fn new(cfg: &Mail) -> Result<Mailer, String> {
        let from: Mailbox = cfg.from.parse().map_err(|e| format!("mail.from `{}`: {e}", cfg.from))?;
        if cfg.url == "log" {
            return Ok(Mailer { from, transport: None });
        }
        let mut builder = SmtpTransport::from_url(&cfg.url).map_err(|e| format!("mail.url `{}`: {e}", cfg.url))?;
        if let Some(password) = &cfg.password {
            let user = cfg
                .url
                .split_once("://")
                .and_then(|(_, rest)| rest.split_once('@'))
                .map(|(user, _)| user.split(':').next().unwrap_or("").to_string())
                .unwrap_or_default();
            builder = builder.credentials(Credentials::new(user, password.clone()));
        }
        let transport = builder.timeout(Some(std::time::Duration::from_secs(20))).build();
        Ok(Mailer { from, transport: Some(transport) })
    }

    /// Sends a plain-text e-mail (blocking: call it off the server's threads).
    pub fn send(&self, to: &str, subject: &str, body: &str) -> Result<(), String> {
        let to: Mailbox = to.parse().map_err(|e| format!("the address `{to}`: {e}"))?;
        let Some(transport) = &self.transport else {
            println!("gbely arena: e-mail to {to}\n  subject: {subject}\n{}", indent(body));
            return Ok(());
        };
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(body.to_string())
            .map_err(|e| e.to_string())?;
        transport.send(&message).map(|_| ()).map_err(|e| format!("SMTP: {e}"))
    }
}

fn indent(body: &str) -> String {
    body.lines().map(|l| format!("  | {l}\n")).collect()
}
