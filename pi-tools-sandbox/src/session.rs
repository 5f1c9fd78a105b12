//! A [`Sandbox`] through its session: before and after each call (the guards), while
//! the session sleeps, and at its end.

use std::io;

use crate::policy::Sandbox;

impl Sandbox {
    /// Before a command starts: what the git guard compares with at the call's end is taken
    /// again, unless a command of the session may still be changing it (a command left running).
    pub fn before_call(&self) {
        if let Some(guard) = &self.git_guard {
            guard.before_call();
        }
        if let Some(guard) = &self.plant_guard {
            guard.before_call();
        }
    }

    /// Whether calls need [`before_call`](Self::before_call) and
    /// [`after_call`](Self::after_call).
    pub fn guards_calls(&self) -> bool {
        self.git_guard.is_some() || self.plant_guard.is_some()
    }

    /// What the end of a call undoes: git redirect files the command created, changed or
    /// removed, one sentence each. `still_running`: a command
    /// of the session left processes running, which may still change them.
    pub fn after_call(&self, still_running: bool) -> Vec<String> {
        self.git_guard
            .as_ref()
            .map_or_else(Vec::new, |g| g.after_call(still_running))
    }

    /// What the end of a call takes away from the protected paths that did not exist
    /// before it, one sentence each. `still_running` as for [`after_call`](Self::after_call).
    pub fn after_call_plants(&self, still_running: bool) -> Vec<String> {
        self.plant_guard
            .as_ref()
            .map_or_else(Vec::new, |g| g.after_call(still_running))
    }

    /// An idle session sleeps: the Landlock ruleset's handle and the repository watch go
    /// (both are made again at the next command), and the private temporary directories
    /// are removed when they are empty and no process of the session runs (made again, at
    /// the same path, before the next command: see [`PrivateTemp`](crate::PrivateTemp)).
    pub fn hibernate(&self, processes_running: bool) {
        #[cfg(all(target_os = "linux", feature = "process"))]
        {
            *self.landlock.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        if let Some(guard) = &self.git_guard {
            guard.hibernate();
        }
        if !processes_running {
            for tmp in self.tmp.iter().chain(&self.shm) {
                tmp.sleep();
            }
        }
    }

    /// Before a command: the private temporary directories a sleeping session gave up are
    /// there again.
    #[cfg_attr(not(feature = "process"), allow(dead_code))]
    pub(crate) fn wake(&self) -> io::Result<()> {
        for tmp in self.tmp.iter().chain(&self.shm) {
            tmp.wake()?;
        }
        Ok(())
    }

    /// What the end of the session undoes: git redirect files and protected paths a command
    /// made, and the private temporary directories are emptied. The caller ends the
    /// session's processes first.
    pub fn end_session(&self) {
        if let Some(guard) = &self.git_guard {
            guard.end_session();
        }
        if let Some(guard) = &self.plant_guard {
            guard.end_session();
        }
        for tmp in self.tmp.iter().chain(&self.shm) {
            tmp.clear();
        }
    }
}
