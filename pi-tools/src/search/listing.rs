//! One directory's listing for the walk: the entries the ignore rules let through, sorted by
//! name, their paths relative to the walk's root packed into one string, and which of them
//! the walk's glob selects.
//!
//! A listing costs a handful of allocations whatever the number of its entries: names are
//! read into buffers the listing thread reuses (on Linux straight from `getdents64`), and the
//! relative paths share one string. Listings are made on helper threads and dropped on the
//! visitor's, where per-entry allocations freed on another thread were most of the cost of
//! a parallel walk.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ignore_rules::{IgnoreFiles, Rules};
use super::path_glob::PathGlob;
use super::walk::WalkBase;
use crate::env::is_temp_file_name;

/// A directory's entries, sorted by name.
#[derive(Default)]
pub(crate) struct Listing {
    /// Every entry's path relative to the walk's root, back to back.
    text: String,
    entries: Vec<Slot>,
    /// The raw names of entries whose names are not UTF-8, by entry index in increasing
    /// order; their relative paths in `text` are lossy.
    odd_names: Vec<(usize, OsString)>,
    /// The ignore rules in force inside the listed directory.
    pub rules: Option<Arc<Rules>>,
    /// The directory could not be read (or only in part).
    pub unreadable: bool,
}

struct Slot {
    start: usize,
    name: usize,
    end: usize,
    kind: Kind,
    selected: bool,
}

/// What an entry is, as the directory says (symbolic links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Link,
    /// A FIFO, socket or device: never opened by a search.
    Special,
}

/// One entry of a listing, as the walk's visitor sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListedEntry<'a> {
    /// The path relative to the walk's root, with `/` separators.
    pub rel: &'a str,
    /// The entry's own name.
    pub name: &'a OsStr,
    /// Whether the entry is a directory (symbolic links are not followed).
    pub is_dir: bool,
    /// What the entry is.
    pub kind: Kind,
    /// Whether the walk's glob (if any) matches it.
    pub selected: bool,
}

impl Listing {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Entry `index`.
    pub(crate) fn entry(&self, index: usize) -> ListedEntry<'_> {
        let slot = &self.entries[index];
        // Kept in entry order, so a binary search finds an entry's raw name.
        let name = self
            .odd_names
            .binary_search_by_key(&index, |(i, _)| *i)
            .ok()
            .map(|at| self.odd_names[at].1.as_os_str());
        ListedEntry {
            rel: &self.text[slot.start..slot.end],
            name: name.unwrap_or_else(|| OsStr::new(&self.text[slot.name..slot.end])),
            is_dir: slot.kind == Kind::Dir,
            kind: slot.kind,
            selected: slot.selected,
        }
    }
}

/// Buffers a listing thread reuses from one directory to the next.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Raw directory records.
    #[cfg(target_os = "linux")]
    records: Vec<u8>,
    /// The UTF-8 names read, back to back (validated once, as they are read).
    names: String,
    found: Vec<Found>,
    /// A path to check against the ignore rules.
    path: PathBuf,
}

/// A name as read: in `Scratch::names`, or when it is not UTF-8, kept as it is.
struct Found {
    start: usize,
    len: usize,
    kind: Kind,
    odd: Option<OsString>,
}

impl Scratch {
    fn note(&mut self, name: &[u8], kind: Kind, odd: impl FnOnce() -> OsString) {
        // The writes' own temporary files are nobody's business (see `env::is_temp_file_name`).
        if is_temp_file_name(name) {
            return;
        }
        let start = self.names.len();
        let odd = match std::str::from_utf8(name) {
            Ok(text) => {
                self.names.push_str(text);
                None
            }
            Err(_) => Some(odd()),
        };
        self.found.push(Found {
            start,
            len: if odd.is_some() { 0 } else { name.len() },
            kind,
            odd,
        });
    }

    /// A name's bytes, by which entries are sorted.
    fn bytes<'a>(names: &'a str, found: &'a Found) -> &'a [u8] {
        match &found.odd {
            Some(raw) => raw.as_encoded_bytes(),
            None => &names.as_bytes()[found.start..found.start + found.len],
        }
    }
}

/// Lists `dir`, whose path relative to the walk's root is `rel` and in which `parent_rules`
/// are in force. `.git` is left out, and so is whatever the rules ignore. An unreadable
/// directory lists as empty (or with what could be read) and says so. The directory is
/// opened beneath `base` (the walk's root) through no symbolic link, so a directory swapped
/// for a link while the walk runs is not followed.
pub(crate) fn list(
    base: &WalkBase,
    dir: &Path,
    rel: &str,
    parent_rules: Option<Arc<Rules>>,
    glob: Option<&PathGlob>,
    scratch: &mut Scratch,
) -> Listing {
    scratch.names.clear();
    scratch.found.clear();
    let unreadable = read_names(base, dir, scratch)
        .is_err_and(|err| err.kind() == io::ErrorKind::PermissionDenied);
    let mut files = IgnoreFiles::default();
    for found in &scratch.found {
        // Ignore files are only read when they are regular files (a FIFO would block the
        // walk); `.git` may be a directory.
        if matches!(found.kind, Kind::File | Kind::Dir) {
            files.note(Scratch::bytes(&scratch.names, found));
        }
    }
    let rules = Rules::within(dir, parent_rules, files);

    let mut found = std::mem::take(&mut scratch.found);
    found.sort_unstable_by(|a, b| {
        Scratch::bytes(&scratch.names, a).cmp(Scratch::bytes(&scratch.names, b))
    });
    let Scratch { names, path, .. } = &mut *scratch;
    let per_entry = rel.len() + 1 + names.len() / found.len().max(1);
    let mut listing = Listing {
        text: String::with_capacity(found.len() * per_entry),
        entries: Vec::with_capacity(found.len()),
        odd_names: Vec::new(),
        rules,
        unreadable,
    };
    for entry in &mut found {
        let name: Cow<'_, str> = match &entry.odd {
            Some(raw) => raw.to_string_lossy(),
            None => Cow::Borrowed(&names[entry.start..entry.start + entry.len]),
        };
        if entry.odd.is_none() && name == ".git" {
            continue;
        }
        if let Some(rules) = &listing.rules {
            path.as_mut_os_string().clear();
            path.push(dir);
            match &entry.odd {
                Some(raw) => path.push(raw),
                None => path.push(&*name),
            }
            if rules.is_ignored(path, entry.kind == Kind::Dir) {
                continue;
            }
        }
        let start = listing.text.len();
        if !rel.is_empty() {
            listing.text.push_str(rel);
            listing.text.push('/');
        }
        let name_at = listing.text.len();
        listing.text.push_str(&name);
        let end = listing.text.len();
        let selected =
            glob.is_none_or(|g| g.is_match(&listing.text[start..end], entry.kind == Kind::Dir));
        if let Some(raw) = entry.odd.take() {
            listing.odd_names.push((listing.entries.len(), raw));
        }
        listing.entries.push(Slot {
            start,
            name: name_at,
            end,
            kind: entry.kind,
            selected,
        });
    }
    found.clear();
    scratch.found = found;
    listing
}

/// Reads the names in `dir` (without `.` and `..`) into `scratch`, each with its kind.
#[cfg(target_os = "linux")]
fn read_names(base: &WalkBase, dir: &Path, scratch: &mut Scratch) -> io::Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;

    let rel = dir.strip_prefix(&base.path).unwrap_or(Path::new(""));
    let fd = crate::env::local::open_beneath(
        base.fd.as_fd(),
        rel,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
        true,
    )?;
    let mut records = std::mem::take(&mut scratch.records);
    records.clear();
    records.reserve(32 * 1024);
    let mut raw = RawDir::new(&fd, records.spare_capacity_mut());
    let mut outcome = Ok(());
    while let Some(entry) = raw.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                outcome = Err(err.into());
                break;
            }
        };
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let file_type = match entry.file_type() {
            // Some file systems do not say; ask (without following a link).
            FileType::Unknown => rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            known => known,
        };
        let kind = match file_type {
            FileType::Directory => Kind::Dir,
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Link,
            _ => Kind::Special,
        };
        scratch.note(bytes, kind, || OsStr::from_bytes(bytes).to_os_string());
    }
    scratch.records = records;
    outcome
}

/// Reads the names in `dir` into `scratch`, each with its kind.
#[cfg(not(target_os = "linux"))]
fn read_names(_base: &WalkBase, dir: &Path, scratch: &mut Scratch) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let kind = if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_file() {
            Kind::File
        } else if file_type.is_symlink() {
            Kind::Link
        } else {
            Kind::Special
        };
        let name = entry.file_name();
        scratch.note(name.as_encoded_bytes(), kind, || name.clone());
    }
    Ok(())
}
