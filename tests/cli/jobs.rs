//! Jobs through `pi-tools run`: a job that ends during the batch is told in the result of a
//! later call, as a `notice` event and in that result's content, and no job outlives the run.

use super::*;

/// bash and the job tools, one call at a time.
const JOBS_TOML: &str = r#"[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
execution = "sequential"
"#;

#[test]
fn a_job_that_ends_during_the_batch_is_told_in_a_later_result_and_none_outlives_the_run() {
    let dir = scratch_dir("jobs-run");
    let config = scratch_file("jobs.toml", JOBS_TOML);
    let tag = procfs::tag();
    let batch = json!([
        {"id": "a", "name": "bash", "arguments": {"command": "echo a; sleep 0.2; echo b", "background": true}},
        {"id": "b", "name": "bash", "arguments": {"command": format!("sleep {tag}"), "background": true}},
        {"id": "c", "name": "bash", "arguments": {"command": "sleep 1; echo later"}}
    ]);
    let mut command = pi_tools();
    command
        .args(["run", "--json", "--config"])
        .arg(&config)
        .arg("--cwd")
        .arg(&dir);
    let output = feed(command, &batch.to_string());
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));
    let notices: Vec<&Value> = events.iter().filter(|e| e["type"] == "notice").collect();
    assert_eq!(notices.len(), 1, "{events:?}");
    assert_eq!(notices[0]["toolCallId"], "c");
    assert_eq!(notices[0]["subject"], "job 1");
    let last = events
        .iter()
        .rfind(|e| e["type"] == "message_end")
        .expect("messages");
    let content = &last["message"]["content"];
    assert_eq!(content[0]["text"], "later");
    let told = content[1]["text"].as_str().expect("the notice");
    assert!(
        told.starts_with("[Job 1 (`echo a; sleep 0.2; echo b`) exited with code 0"),
        "{told}"
    );
    assert_eq!(procfs::settle_blocking(0, || procfs::alive(&tag).len()), 0);
}
