//! What to say when the process is out of file descriptors (`EMFILE`, or the system's
//! `ENFILE`): that, the limit, and what to do, instead of blaming the path or the command
//! whose open happened to fail.

use std::fmt;
use std::io;

use rustix::io::Errno;

/// An `EMFILE` or `ENFILE` error, said as a sentence naming it and the limit; its source is
/// the system's error.
#[derive(Debug)]
struct OutOfDescriptors {
    sentence: String,
    errno: io::Error,
}

impl fmt::Display for OutOfDescriptors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sentence)
    }
}

impl std::error::Error for OutOfDescriptors {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.errno)
    }
}

/// The process's soft limit on open files (`RLIMIT_NOFILE`), `None` when unlimited: the
/// one reading of it, for the sentence below and for the bounds a server derives from it.
pub(crate) fn descriptor_limit() -> Option<usize> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .and_then(|n| usize::try_from(n).ok())
}

/// `error`, said as [`out_of_descriptors`] says it when it is `EMFILE` or `ENFILE`, with
/// `doing` (what failed, e.g. "opening the allowed root /srv") in the sentence.
pub(crate) fn named(error: io::Error, doing: &str) -> io::Error {
    match out_of_descriptors(&error) {
        Some(sentence) => io::Error::new(
            error.kind(),
            OutOfDescriptors {
                sentence: format!("{sentence} (It happened {doing}.)"),
                errno: error,
            },
        ),
        None => error,
    }
}

/// The sentence for `error` when it is `EMFILE` or `ENFILE` (or [`named`] made it).
pub(crate) fn out_of_descriptors(error: &io::Error) -> Option<String> {
    if let Some(named) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<OutOfDescriptors>())
    {
        return Some(named.sentence.clone());
    }
    let errno = errno_in(error)?;
    if errno == Errno::MFILE {
        let limit = descriptor_limit().map_or_else(|| "unlimited".to_owned(), |n| n.to_string());
        Some(format!(
            "The server is out of file descriptors (EMFILE, too many open files: its soft limit, `ulimit -n`, is {limit}). Run the call again later, end sessions and background jobs you no longer use, or raise the server's limit on open files."
        ))
    } else if errno == Errno::NFILE {
        Some(
            "The system is out of file descriptors (ENFILE, too many open files in the system: `fs.file-max`). Run the call again later, or end processes that hold many files.".to_owned(),
        )
    } else {
        None
    }
}

/// `EMFILE` or `ENFILE`: the error's own, or that of an error it wraps. A wrapper that
/// kept only the text (a message made of the error) still says `(os error N)`.
fn errno_in(error: &io::Error) -> Option<Errno> {
    let out = |errno: Errno| (errno == Errno::MFILE || errno == Errno::NFILE).then_some(errno);
    if let Some(code) = error.raw_os_error() {
        return out(Errno::from_raw_os_error(code));
    }
    let mut inner: Option<&(dyn std::error::Error + 'static)> = error
        .get_ref()
        .map(|e| e as &(dyn std::error::Error + 'static));
    while let Some(err) = inner {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            return errno_in(io);
        }
        inner = err.source();
    }
    let text = error.to_string();
    [Errno::MFILE, Errno::NFILE]
        .into_iter()
        .find(|errno| text.contains(&format!("(os error {})", errno.raw_os_error())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emfile_is_named_with_the_limit() {
        let error = io::Error::from_raw_os_error(Errno::MFILE.raw_os_error());
        let said = out_of_descriptors(&error).expect("EMFILE is recognised");
        assert!(said.contains("EMFILE, too many open files"), "{said}");
        assert!(said.contains("`ulimit -n`, is "), "{said}");
    }

    #[test]
    fn a_named_error_keeps_its_sentence_and_what_failed() {
        let error = named(
            io::Error::from_raw_os_error(Errno::MFILE.raw_os_error()),
            "opening the allowed root /srv",
        );
        let said = out_of_descriptors(&error).expect("still recognised");
        assert_eq!(said, error.to_string());
        assert!(
            said.ends_with("(It happened opening the allowed root /srv.)"),
            "{said}"
        );
        let other = named(
            io::Error::from_raw_os_error(Errno::NOENT.raw_os_error()),
            "x",
        );
        assert!(out_of_descriptors(&other).is_none());
    }

    #[test]
    fn emfile_wrapped_or_said_in_a_message_is_recognised() {
        let emfile = || io::Error::from_raw_os_error(Errno::MFILE.raw_os_error());
        assert!(out_of_descriptors(&io::Error::other(emfile())).is_some());
        let said = io::Error::other(format!("spawning the shell: {}.", emfile()));
        assert!(out_of_descriptors(&said).is_some());
        let other = io::Error::other("allowed root /srv cannot be used: not a directory");
        assert!(out_of_descriptors(&other).is_none());
    }
}
