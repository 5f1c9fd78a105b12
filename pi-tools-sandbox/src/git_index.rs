//! What a repository's files say about its submodules: the gitlinks of its index and the
//! paths of `.gitmodules`. Only plain relative paths are kept (no `..`, no absolute path, no
//! `.git` component): a command can write the index, and a path that leads elsewhere must
//! not make the guard look (or clean) there.

use std::ffi::OsStr;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::nofollow::{names, open_dir, read_at};

/// Whether `path` is a plain path inside the work tree: normal components only, none of
/// them `.git` (in any case).
pub(super) fn plain_relative(path: &Path) -> bool {
    !path.as_os_str().is_empty()
        && path.components().all(|c| match c {
            Component::Normal(name) => !name.eq_ignore_ascii_case(".git"),
            _ => false,
        })
}

/// The `path = …` entries of a `.gitmodules` file.
pub(super) fn gitmodules_paths(file: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| PathBuf::from(value.trim().trim_matches('"')))
        })
        .filter(|p| plain_relative(p))
        .collect()
}

/// The paths of the gitlinks (submodules) staged in the git directory `git_dir`: in its
/// `index` and, with a split index (`git update-index --split-index`), in the shared index
/// files it builds on (`sharedindex.<hash>`; all of them, whichever the index names). Only
/// regular files are read, without following a link; nothing when none can be read.
pub(super) fn gitlinks(git_dir: &Path) -> Vec<PathBuf> {
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;
    let Some(dir) = open_dir(git_dir) else {
        return Vec::new();
    };
    // SHA-256 repositories have 32-byte object names; the entry's flags follow the name.
    let oid = match read_at(dir.as_fd(), OsStr::new("config")) {
        Some(config)
            if String::from_utf8_lossy(&config)
                .to_lowercase()
                .contains("objectformat = sha256") =>
        {
            32
        }
        _ => 20,
    };
    let mut links = Vec::new();
    for name in names(dir.as_fd()) {
        let index = name == "index" || name.as_bytes().starts_with(b"sharedindex.");
        if let Some(data) = index.then(|| read_at(dir.as_fd(), &name)).flatten() {
            links.extend(index_gitlinks(&data, oid));
        }
    }
    links.sort();
    links.dedup();
    links
}

/// The gitlinks in the bytes of one index file, versions 2 to 4 (`oid`: the length of an
/// object name).
fn index_gitlinks(data: &[u8], oid: usize) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let be32 = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if data.get(..4) != Some(b"DIRC".as_slice()) {
        return Vec::new();
    }
    let (Some(version), Some(count)) = (be32(4), be32(8)) else {
        return Vec::new();
    };
    let mut links = Vec::new();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let Some(mode) = be32(at + 24) else { break };
        let flags_at = at + 40 + oid;
        let Some(flags) = data
            .get(flags_at..flags_at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
        else {
            break;
        };
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version >= 4 {
            // The number of bytes to drop from the previous name, then the rest of this one.
            let Some((drop, used)) = varint(&data[name_at.min(data.len())..]) else {
                break;
            };
            let start = name_at + used;
            let Some(end) = data[start.min(data.len())..]
                .iter()
                .position(|&b| b == 0)
                .map(|n| start + n)
            else {
                break;
            };
            let keep = previous.len().saturating_sub(drop);
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&data[start..end]);
            at = end + 1;
            name
        } else {
            let Some(end) = data[name_at.min(data.len())..]
                .iter()
                .position(|&b| b == 0)
                .map(|n| name_at + n)
            else {
                break;
            };
            // Entries are padded with NULs to a multiple of eight bytes.
            let len = end - at;
            at += (len + 8) & !7;
            data[name_at..end].to_vec()
        };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&name));
        if mode & 0o170000 == 0o160000 && plain_relative(&path) {
            links.push(path);
        }
        previous = name;
    }
    links
}

/// Git's offset varint (index v4): the value and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut byte = *bytes.first()?;
    used += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_shl(7)? | usize::from(byte & 0x7f);
    }
    Some((value, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_varint_reads_as_git_writes_it() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81, 0x7f]), Some((383, 2)));
        assert_eq!(varint(&[0x80]), None);
    }

    #[test]
    fn only_plain_paths_inside_the_work_tree_are_kept() {
        for good in ["sub", "a/b", "a.git", ".gitx/y"] {
            assert!(plain_relative(Path::new(good)), "{good}");
        }
        for bad in [
            "", "/etc", "../out", "a/../b", "./a", ".git", "a/.GIT/b", "sub/.git",
        ] {
            assert!(!plain_relative(Path::new(bad)), "{bad}");
        }
    }
}
