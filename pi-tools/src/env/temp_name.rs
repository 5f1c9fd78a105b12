//! The names of the temporary files a write makes beside its target before renaming it into
//! place: every environment's listings hide them (locally and when walking through an
//! environment), and the local writer removes those whose writer is gone.

/// Temporary files are named `.<name>.pi-tools.<pid>.<n>.tmp`.
pub(crate) const TEMP_MARK: &str = ".pi-tools.";

/// The process id in a name of one of our temporary files (`None`: not one of ours).
pub(crate) fn temp_file_owner(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".")?.strip_suffix(b".tmp")?;
    let (rest, n) = split_last_dot(rest)?;
    let (rest, pid) = split_last_dot(rest)?;
    if !rest.ends_with(&TEMP_MARK.as_bytes()[..TEMP_MARK.len() - 1]) || !all_digits(n) {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

/// Whether a file name is one of the temporary files writes make (hidden from listings).
pub fn is_temp_file_name(name: &[u8]) -> bool {
    temp_file_owner(name).is_some()
}

fn split_last_dot(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = memchr::memrchr(b'.', bytes)?;
    Some((&bytes[..at], &bytes[at + 1..]))
}

fn all_digits(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_with_their_writer() {
        assert_eq!(temp_file_owner(b".a.txt.pi-tools.123.0.tmp"), Some(123));
        assert_eq!(temp_file_owner(b"..pi-tools.7.12.tmp"), Some(7));
        assert_eq!(temp_file_owner(b".a.txt.123.0.tmp"), None);
        assert_eq!(temp_file_owner(b"a.txt.pi-tools.123.0.tmp"), None);
        assert_eq!(temp_file_owner(b".a.pi-tools.x.0.tmp"), None);
        assert_eq!(temp_file_owner(b".a.pi-tools.1.x.tmp"), None);
    }
}
