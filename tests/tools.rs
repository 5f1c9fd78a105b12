//! The seven built-in tools, one module per tool, and what they share: the per-file mutation
//! queue, the file safety rules, process groups, the bash sandbox, their schemas in every
//! dialect, and fuzzed arguments.

mod builtin_results;
mod confinement;
mod dialects_builtin;
mod edit_proptest;
mod file_safety;
mod fuzz;
mod mutation_queue;
mod native_shapes;
mod nested_calls;
mod policy;
mod policy_enforce;
mod processes;
mod sandbox;
mod sandbox_git;
mod sandbox_git_guard;
mod sandbox_git_moved;
mod sandbox_git_nested;
mod tool_bash;
mod tool_edit;
mod tool_find;
mod tool_grep;
mod tool_grep_index;
mod tool_jobs;
mod tool_ls;
mod tool_read;
mod tool_write;
