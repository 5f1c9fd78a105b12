//! Mounts beneath an indexed directory. The kernel reports no change notification when a
//! file system is mounted on a directory or unmounted from it (`mount --bind SRC tree/d`),
//! so the index would go on answering from what it walked before. The mount table says
//! which mounts there are: before each search the index reads the mount points beneath its
//! root from `/proc/self/mountinfo` (a small file read in a few microseconds), and when they
//! changed it walks the tree again (which also watches the directories of the new mount).

use std::path::{Path, PathBuf};

/// The mount points at or beneath `root`, sorted; `None` where the table cannot be read
/// (then nothing is known to change, and nothing is compared).
pub(super) fn beneath(root: &Path) -> Option<Vec<PathBuf>> {
    let table = std::fs::read("/proc/self/mountinfo").ok()?;
    Some(parse(&table, root))
}

/// The mount points at or beneath `root` in the text of a `mountinfo` table, sorted, with
/// each line's identity (mount id and device) so a mount replaced at the same point counts
/// as a change.
fn parse(table: &[u8], root: &Path) -> Vec<PathBuf> {
    let mut points: Vec<PathBuf> = table
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let mut fields = line.split(|&b| b == b' ');
            let id = fields.next()?;
            let _parent = fields.next()?;
            let device = fields.next()?;
            let _root = fields.next()?;
            let point = PathBuf::from(unescape(fields.next()?));
            point.starts_with(root).then(|| {
                let mut key = point.into_os_string();
                key.push(format!(
                    " #{}/{}",
                    String::from_utf8_lossy(id),
                    String::from_utf8_lossy(device)
                ));
                PathBuf::from(key)
            })
        })
        .collect();
    points.sort();
    points
}

/// A `mountinfo` field with its octal escapes (`\040` for a space, `\011`, `\012`, `\134`)
/// turned back into bytes.
fn unescape(field: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_mount_points_beneath_the_root_count_with_their_identity() {
        let table = b"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
            30 22 8:1 /src /work/tree/d/e rw - ext4 /dev/sda1 rw\n\
            31 22 0:5 / /work/tree/with\\040space rw - tmpfs t rw\n\
            32 22 0:6 / /work/other rw - tmpfs t rw\n";
        assert_eq!(
            parse(table, Path::new("/work/tree")),
            [
                PathBuf::from("/work/tree/d/e #30/8:1"),
                PathBuf::from("/work/tree/with space #31/0:5")
            ]
        );
        assert!(parse(table, Path::new("/nowhere")).is_empty());
    }
}
