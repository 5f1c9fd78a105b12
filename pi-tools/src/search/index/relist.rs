//! Catching up with one directory whose names changed (a file created, removed, renamed or
//! replaced by another kind of entry): the directory is listed again, as the walk lists it,
//! and its files in the table are brought in line, without walking the whole tree.

use super::table::{Content, Entry, Got, Reader, Table, rel_path};
use crate::search::ignore_rules::Rules;
use crate::search::listing::{Scratch, list};
use crate::search::walk::{Kind, WalkBase};

impl Table {
    /// Lists the directory `dir` (relative to the root) again and updates its direct
    /// entries: new files are read and put in their place in walk order, vanished ones
    /// dropped, and any whose kind changed read again. False when this cannot be done
    /// here (a directory appeared or vanished, the directory is unknown or unreadable, a
    /// name is not UTF-8): then the whole tree must be walked.
    pub(crate) fn relist(&mut self, base: &WalkBase, dir: &str, reader: &mut Reader) -> bool {
        if !self.dirs.contains(dir) {
            return false;
        }
        let path = if dir.is_empty() {
            base.path.clone()
        } else {
            base.path.join(dir)
        };
        // The rules the walk applies in `dir`: those of every directory above it.
        let listing = list(
            base,
            &path,
            dir,
            Rules::above(&path),
            None,
            &mut Scratch::default(),
        );
        if listing.unreadable {
            return false;
        }
        let mut listed: Vec<(String, Kind)> = Vec::with_capacity(listing.len());
        for i in 0..listing.len() {
            let e = listing.entry(i);
            if e.name.to_str().is_none() || (e.kind == Kind::Dir && !self.dirs.contains(e.rel)) {
                return false;
            }
            listed.push((e.rel.to_owned(), e.kind));
        }
        // The table's direct entries of `dir`, by position.
        let (start, end) = self.subtree(dir);
        let direct: Vec<usize> = (start..end)
            .filter(|&i| is_child(&self.entries[i].rel, dir))
            .collect();
        for &i in &direct {
            let e = &self.entries[i];
            let still = listed.iter().find(|(rel, _)| **rel == *e.rel);
            match still {
                None if e.kind == Kind::Dir => return false,
                Some((_, kind))
                    if *kind != e.kind && (e.kind == Kind::Dir || *kind == Kind::Dir) =>
                {
                    return false;
                }
                _ => {}
            }
        }
        // Drop what vanished (from the back, so positions stay valid).
        let mut known = std::collections::HashMap::new();
        let mut dropped = Vec::new();
        for &i in direct.iter().rev() {
            if listed.iter().any(|(rel, _)| *rel == *self.entries[i].rel) {
                known.insert(self.entries[i].rel.clone(), self.entries[i].kind);
            } else {
                let gone = self.entries.remove(i);
                if let Content::Own(t) = &gone.content {
                    self.own_bytes -= t.len() * 4;
                }
                dropped.push(gone.rel);
            }
        }
        // Put new entries in their place, then read them (and those whose kind changed)
        // once every position is known again.
        let mut to_read = Vec::new();
        for (rel, kind) in &listed {
            match known.get(rel.as_str()) {
                Some(k) if k == kind => {}
                Some(_) => to_read.push((rel.clone(), *kind)),
                None => {
                    let at = self.place_of(dir, rel);
                    self.entries.insert(
                        at,
                        Entry {
                            rel: rel.as_str().into(),
                            path: base.path.join(rel),
                            kind: *kind,
                            sig: None,
                            content: Content::Scan,
                        },
                    );
                    to_read.push((rel.clone(), *kind));
                }
            }
        }
        self.reindex(&dropped);
        for (rel, kind) in to_read {
            if let Some(&at) = self.by_rel.get(rel.as_str()) {
                self.entries[at].kind = kind;
                self.read_again(base, at, reader);
            }
        }
        true
    }

    fn read_again(&mut self, base: &WalkBase, at: usize, reader: &mut Reader) {
        let e = &self.entries[at];
        let (sig, got) = if matches!(e.kind, Kind::File | Kind::Link) {
            reader.read(base, rel_path(base, &e.path), e.kind)
        } else {
            (None, Got::Scan)
        };
        self.set(at, sig, got);
    }

    /// The positions `[start, end)` of the entries below `dir` (found by looking, as the
    /// positions may have moved since they were last indexed).
    fn subtree(&self, dir: &str) -> (usize, usize) {
        if dir.is_empty() {
            return (0, self.entries.len());
        }
        let Some(own) = self.entries.iter().position(|e| *e.rel == *dir) else {
            return (0, 0);
        };
        let end = (own + 1..self.entries.len())
            .find(|&i| !is_below(&self.entries[i].rel, dir))
            .unwrap_or(self.entries.len());
        (own + 1, end)
    }

    /// Where a new direct entry `rel` of `dir` goes in walk order: before the first direct
    /// entry whose name sorts after its name, else at the end of `dir`'s entries.
    fn place_of(&self, dir: &str, rel: &str) -> usize {
        let (start, end) = self.subtree(dir);
        let name = name_of(rel);
        (start..end)
            .find(|&i| {
                let e = &self.entries[i].rel;
                is_child(e, dir) && name_of(e).as_bytes() > name.as_bytes()
            })
            .unwrap_or(end)
    }

    /// Brings the positions up to date after entries moved (`gone`: the paths dropped),
    /// updating the map in place rather than rebuilding it.
    fn reindex(&mut self, gone: &[Box<str>]) {
        for rel in gone {
            self.by_rel.remove(rel);
        }
        self.base_pos.iter_mut().for_each(|p| *p = usize::MAX);
        for (i, e) in self.entries.iter().enumerate() {
            match self.by_rel.get_mut(&*e.rel) {
                Some(at) => *at = i,
                None => {
                    self.by_rel.insert(e.rel.clone(), i);
                }
            }
            if let Content::Base(id) = e.content {
                self.base_pos[id as usize] = i;
            }
        }
    }
}

fn name_of(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Whether `rel` is directly in `dir`.
fn is_child(rel: &str, dir: &str) -> bool {
    let parent = rel.rfind('/').map_or("", |at| &rel[..at]);
    parent == dir
}

/// Whether `rel` is somewhere below `dir` (not the root).
fn is_below(rel: &str, dir: &str) -> bool {
    rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}
