//! The tools `pi-tools mcp` serves, kept in step with what they come from while it runs:
//! the mounted servers' tool lists, and the tools its configuration file declares. One task
//! owns the toolbox and takes in each change, then [`ToolListUpdates::replace`] serves the
//! new tools, which tells the clients (2025-11-25 sessions get
//! `notifications/tools/list_changed`, coalesced; 2026-07-28 `subscriptions/listen` streams
//! hear it). A call already running finishes with the tool it started with.

use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::core::{RunnerConfig, UnknownToolMessage};
use crate::mcp::{McpTools, ToolListUpdates};
use crate::mount::Mounts;
use crate::tool::ToolDefinition;
use crate::toolbox::Toolbox;

use super::mounted::{Need, wanted};
use super::reload::Reloader;

/// The toolbox's sentence for a call of a tool that is registered but not active, as the
/// toolbox is now: the runner configuration the server was given at the start asks it at
/// each such call, and [`follow`] keeps it in step (a declared tool that was inactive and
/// left the file is then simply unknown).
#[derive(Clone)]
pub(super) struct Inactive(Arc<RwLock<Option<UnknownToolMessage>>>);

impl Inactive {
    /// `base` (made from `toolbox`) asking the toolbox of the moment.
    pub(super) fn runner_config(base: RunnerConfig) -> (RunnerConfig, Inactive) {
        let inactive = Inactive(Arc::new(RwLock::new(base.unknown_tool.clone())));
        let now = inactive.clone();
        let unknown_tool: UnknownToolMessage = Arc::new(move |name: &str| {
            let message = now.0.read().unwrap_or_else(|e| e.into_inner()).clone();
            message.and_then(|message| message(name))
        });
        let config = RunnerConfig {
            unknown_tool: Some(unknown_tool),
            ..base
        };
        (config, inactive)
    }

    fn update(&self, toolbox: &Toolbox) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = toolbox.runner_config().unknown_tool;
    }
}

/// Follows `mounts` (when any is configured) and the configuration file `reloader` watches
/// (when given) with `toolbox`, serving each change through `updates` and `inactive`. Runs
/// until aborted.
///
/// A mounted list that cannot be taken in (a name that clashes) and a configuration that
/// is refused are logged, and the tools served stay as they were.
pub(super) fn follow(
    mounts: Arc<Mounts>,
    mut toolbox: Toolbox,
    updates: ToolListUpdates,
    inactive: Inactive,
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
            // What is served, to go back to when the change cannot be listed: the toolbox
            // then stays what the clients see, and the next change starts from it.
            let served = Served::of(&toolbox);
            let mut reread = None;
            let replaced = tokio::select! {
                changed = mounted_change(&mut changes) => {
                    if !changed {
                        changes = None;
                        continue;
                    }
                    take_mounted(&mounts, &mut toolbox).await
                }
                () = file_change(&mut reloader) => match reloader.as_mut().and_then(Reloader::reread) {
                    Some(next) => {
                        toolbox.replace_declared(next.declared.clone(), next.active.clone());
                        reread = Some(next);
                        true
                    }
                    None => false,
                },
            };
            if !replaced {
                continue;
            }
            match updates.replace(&McpTools::from(&toolbox)) {
                Ok(_) => {
                    inactive.update(&toolbox);
                    if let (Some(reloader), Some(reread)) = (reloader.as_mut(), &reread) {
                        tracing::info!("{}", reloader.taken_in(reread));
                    }
                }
                Err(e) => {
                    served.restore(&mut toolbox);
                    match reloader.as_mut().filter(|_| reread.is_some()) {
                        // Refused as a reading is: said once, and read again at the next
                        // change of the file.
                        Some(reloader) => reloader.refuse(&e.to_string()),
                        None => tracing::warn!("{e}; the tools served stay as they were"),
                    }
                }
            }
        }
    })
}

/// The mounted and declared tools a toolbox serves, to put back.
struct Served {
    mounted: Vec<Arc<dyn ToolDefinition>>,
    declared: Vec<crate::config::DeclaredTool>,
    active: Vec<String>,
}

impl Served {
    fn of(toolbox: &Toolbox) -> Served {
        Served {
            mounted: toolbox
                .registered()
                .iter()
                .filter(|t| t.spec().mounted_from().is_some())
                .cloned()
                .collect(),
            declared: toolbox.config().declared.clone(),
            active: toolbox.config().active.clone(),
        }
    }

    fn restore(self, toolbox: &mut Toolbox) {
        toolbox.replace_declared(self.declared, self.active);
        toolbox.replace_mounted(self.mounted);
    }
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
