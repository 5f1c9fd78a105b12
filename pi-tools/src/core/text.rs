//! Words for messages a model or a person reads: an error's text as the end of a sentence, a
//! number of seconds, a signal's name. The kernel's messages and the built-in tools' use the
//! same ones; a tool of yours can too.

use std::fmt::Display;

/// An error's text as the end of a sentence: exactly one final period.
///
/// ```
/// use pi_tools::text::sentence;
/// assert_eq!(sentence(&"No such file or directory (os error 2)"), "No such file or directory (os error 2).");
/// assert_eq!(sentence(&"already a sentence. "), "already a sentence.");
/// ```
pub fn sentence(err: &impl Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}

/// A number of seconds as a person writes it: `1 second`, `60 seconds`, `0.5 seconds`.
///
/// ```
/// use pi_tools::text::seconds_text;
/// assert_eq!(seconds_text(1.0), "1 second");
/// assert_eq!(seconds_text(180.0), "180 seconds");
/// assert_eq!(seconds_text(0.1), "0.1 seconds");
/// ```
pub fn seconds_text(secs: f64) -> String {
    if secs == 1.0 {
        "1 second".to_owned()
    } else {
        format!("{secs} seconds")
    }
}

/// The name of a common signal (`SIGTERM`), or `None` for another number.
///
/// ```
/// use pi_tools::text::signal_name;
/// assert_eq!(signal_name(libc::SIGKILL), Some("SIGKILL"));
/// assert_eq!(signal_name(64), None);
/// ```
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}
