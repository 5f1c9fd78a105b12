//! The SSH execution environment against a real sshd: the same calls give the same results
//! here and over SSH, and the faults a connection can meet.

mod env_suite;
mod ssh_faults;
mod ssh_helper_cache;
mod ssh_jobs;
