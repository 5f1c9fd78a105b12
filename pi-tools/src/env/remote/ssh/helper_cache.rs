//! The remote cache of uploaded helpers, `~/.cache/pi-tools/`: one `pi-tools-<version>-
//! <size>-<mtime>` per local build that was uploaded. Every build uploads a binary of its
//! own, so without a bound a developer's rebuilds (and a CI machine's runs) would pile up
//! there, tens of megabytes each. After each upload the cache keeps the helper just
//! uploaded and the [`KEEP_OTHERS`] other helpers used most recently (the start script
//! touches a cached helper when it runs it), and drops temporary uploads a lost connection
//! left behind. A helper running while it is removed keeps running; its process uploads it
//! again at its next start.

use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use openssh_sftp_client::Sftp;

use super::files::io_error;

/// How many helpers of other builds stay beside the one uploaded now: a second program of
/// another version on the same remote, or the build before, does not upload again.
pub(super) const KEEP_OTHERS: usize = 2;

/// A temporary upload (`.pi-tools-….tmp`) older than this was left by a lost connection;
/// a younger one may be another process's upload in progress.
const STALE_UPLOAD: Duration = Duration::from_secs(60 * 60);

/// Removes from `dir` the helpers other than `keep` beyond the [`KEEP_OTHERS`] most recently
/// used, and stale temporary uploads. Returns how many files it removed. Entries that are
/// not regular files, or whose names are not the cache's, are never touched.
pub(super) async fn evict(sftp: &Sftp, dir: &Path, keep: &str) -> io::Result<usize> {
    let mut fs = sftp.fs();
    let listing = fs.open_dir(dir).await.map_err(io_error)?;
    let mut entries = Box::pin(listing.read_dir());
    let now = SystemTime::now();
    let mut helpers = Vec::new();
    let mut stale = Vec::new();
    while let Some(entry) = entries.next().await {
        let entry = entry.map_err(io_error)?;
        let name = entry.filename().to_string_lossy().into_owned();
        if !entry.file_type().is_some_and(|t| t.is_file()) || name == keep {
            continue;
        }
        let used = entry
            .metadata()
            .modified()
            .map_or(SystemTime::UNIX_EPOCH, |t| t.as_system_time());
        if name.starts_with("pi-tools-") {
            helpers.push((used, name));
        } else if name.starts_with(".pi-tools-")
            && name.ends_with(".tmp")
            && now.duration_since(used).is_ok_and(|age| age > STALE_UPLOAD)
        {
            stale.push(name);
        }
    }
    drop(entries);
    helpers.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
    let mut removed = 0;
    let gone = helpers.into_iter().skip(KEEP_OTHERS).map(|(_, name)| name);
    for name in gone.chain(stale) {
        if fs.remove_file(dir.join(&name)).await.is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}
