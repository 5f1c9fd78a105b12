//! The tools `pi-tools mcp` serves, kept in step with what they come from while it runs:
//! the mounted servers' tool lists, and the tools its configuration file declares. One task
//! owns the toolbox and takes in each change, then [`ToolListUpdates::replace`] serves the
//! new tools, which tells the clients (2025-11-25 sessions get
//! `notifications/tools/list_changed`, coalesced; 2026-07-28 `subscriptions/listen` streams
//! hear it). A call already running finishes with the tool it started with.

use std::sync::Arc;

use tokio::sync::watch;

use crate::mcp::{McpTools, ToolListUpdates};
use crate::mount::Mounts;
use crate::tool::ToolDefinition;
use crate::toolbox::Toolbox;

use super::mounted::{Need, wanted};
use super::reload::Reloader;

/// Follows `mounts` (when any is configured) and the configuration file `reloader` watches
/// (when given) with `toolbox`, serving each change through `updates`. Runs until aborted.
///
/// A mounted list that cannot be taken in (a name that clashes) and a configuration that
/// is refused are logged, and the tools served stay as they were.
pub(super) fn follow(
    mounts: Arc<Mounts>,
    mut toolbox: Toolbox,
    updates: ToolListUpdates,
    mut reloader: Option<Reloader>,
) -> tokio::task::JoinHandle<()> {
    let mut changes = (!mounts.is_empty()).then(|| mounts.changes());
    // A change since the tools were first listed is taken in at once (taking in the same
    // list again changes nothing).
    if let Some(changes) = changes.as_mut()
        && *changes.borrow() != 0
    {
        changes.mark_changed();
    }
    tokio::spawn(async move {
        loop {
            let replaced = tokio::select! {
                changed = mounted_change(&mut changes) => {
                    if !changed {
                        changes = None;
                        continue;
                    }
                    take_mounted(&mounts, &mut toolbox).await
                }
                () = file_change(&mut reloader) => match reloader.as_mut().and_then(Reloader::reread) {
                    Some(reread) => {
                        toolbox.replace_declared(reread.declared, reread.active);
                        true
                    }
                    None => false,
                },
            };
            if replaced && let Err(e) = updates.replace(&McpTools::from(&toolbox)) {
                tracing::warn!("{e}; the tools served stay as they were");
            }
        }
    })
}

/// Whether the mounted servers' tools changed (`false`: they never will again); never
/// ready without mounted servers.
async fn mounted_change(changes: &mut Option<watch::Receiver<u64>>) -> bool {
    match changes {
        Some(changes) => changes.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// The next change of the configuration's files; never without a file followed.
async fn file_change(reloader: &mut Option<Reloader>) {
    match reloader {
        Some(reloader) => reloader.changed().await,
        None => std::future::pending().await,
    }
}

/// Takes the mounted servers' tools as they list them now into `toolbox` (those `[tools]
/// active` draws from, as at the start); whether it did.
async fn take_mounted(mounts: &Mounts, toolbox: &mut Toolbox) -> bool {
    let own: Vec<Arc<dyn ToolDefinition>> = toolbox
        .registered()
        .iter()
        .filter(|t| t.spec().mounted_from().is_none())
        .cloned()
        .collect();
    let config = toolbox.config().clone();
    match mounts
        .definitions(wanted(&config, &Need::Active), &own)
        .await
    {
        Ok(tools) => {
            toolbox.replace_mounted(tools);
            true
        }
        Err(why) => {
            tracing::warn!(
                "{}: {why}; the tools served stay as they were",
                config.origin
            );
            false
        }
    }
}
