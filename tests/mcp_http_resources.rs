//! Files a result points at, over `pi-tools mcp --http` with a real HTTP client: bash's
//! whole output when only its tail fits, and the rest of a file a read cut short, come as
//! `resource_link` content that the session reads back whole with `resources/read`. Another
//! session cannot read a spill file it was not given; reads stay within the roots and
//! under the policy.
#![cfg(feature = "cli")]

use serde_json::{Value, json};

use crate::mcp_http_support::{HttpServer, messages};

const CONFIG: &str = r#"[tools]
active = ["bash", "read"]

[[policy.rule]]
tool = "read"
path = ["secret.txt"]
decision = "deny"
reason = "Secrets stay put."
"#;

/// Sends `method` with `params` in `session`; the answer with id `id`.
async fn ask(server: &HttpServer, session: &str, id: i64, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let response = server
        .post(Some(session), &body)
        .send()
        .await
        .expect("the request is sent");
    messages(response)
        .await
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {method}"))
}

/// The `resource_link` blocks of a call's answer.
fn links(answer: &Value) -> Vec<Value> {
    answer["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter(|block| block["type"] == "resource_link")
        .cloned()
        .collect()
}

fn numbers(to: u32) -> String {
    (1..=to).map(|n| format!("{n}\n")).collect()
}

#[tokio::test]
async fn a_spilled_output_is_a_link_its_session_reads_whole_and_no_other_session_can() {
    let server = HttpServer::spawn_with(None, &[], Some(CONFIG)).await;
    let one = server.open_session().await;
    let other = server.open_session().await;
    let answer = server
        .call(&one, 1, "bash", json!({"command": "seq 1 30000"}))
        .await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let links = links(&answer);
    assert_eq!(links.len(), 1, "{answer}");
    let link = &links[0];
    let uri = link["uri"].as_str().expect("a uri");
    assert!(
        uri.starts_with("file:///") && uri.contains("/pi-tools-bash/bash-"),
        "{link}"
    );
    assert_eq!(link["mimeType"], "text/plain", "{link}");
    assert_eq!(
        link["description"], "The command's whole output (30000 lines, 164.9KB).",
        "{link}"
    );
    // The text names the same file.
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains(&uri["file://".len()..]), "{text}");

    let read = ask(&server, &one, 2, "resources/read", json!({"uri": uri})).await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], uri, "{read}");
    assert_eq!(contents["mimeType"], "text/plain");
    assert_eq!(contents["text"].as_str(), Some(numbers(30000).as_str()));

    let listed = ask(&server, &one, 3, "resources/list", json!({})).await;
    assert_eq!(listed["result"]["resources"][0]["uri"], uri, "{listed}");

    // Another session was not given the file: it does not exist for it.
    let refused = ask(&server, &other, 4, "resources/read", json!({"uri": uri})).await;
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    let listed = ask(&server, &other, 5, "resources/list", json!({})).await;
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");
}

#[tokio::test]
async fn a_read_cut_short_links_the_whole_file_and_resource_reads_keep_to_the_roots_and_policy() {
    let server = HttpServer::spawn_with(None, &[], Some(CONFIG)).await;
    std::fs::write(server.path("big.txt"), numbers(5000)).expect("written");
    std::fs::write(server.path("secret.txt"), "hunter2\n").expect("written");
    let session = server.open_session().await;
    let answer = server
        .call(&session, 1, "read", json!({"path": "big.txt"}))
        .await;
    let links = links(&answer);
    assert_eq!(links.len(), 1, "{answer}");
    let big = server
        .path("big.txt")
        .canonicalize()
        .expect("the file is there");
    assert_eq!(
        links[0]["uri"],
        format!("file://{}", big.display()),
        "{answer}"
    );
    assert_eq!(links[0]["description"], "The whole file (5000 lines).");
    let uri = links[0]["uri"].as_str().expect("a uri");
    let read = ask(&server, &session, 2, "resources/read", json!({"uri": uri})).await;
    assert_eq!(
        read["result"]["contents"][0]["text"].as_str(),
        Some(numbers(5000).as_str()),
        "{read}"
    );

    // Outside the working directory (the roots over HTTP): not read.
    let outside = ask(
        &server,
        &session,
        3,
        "resources/read",
        json!({"uri": "file:///etc/passwd"}),
    )
    .await;
    assert!(outside["error"]["code"].is_number(), "{outside}");
    assert!(outside.get("result").is_none(), "{outside}");

    // A file the policy keeps from read is kept from resources/read too.
    let secret = format!(
        "file://{}",
        server
            .path("secret.txt")
            .canonicalize()
            .expect("there")
            .display()
    );
    let denied = ask(
        &server,
        &session,
        4,
        "resources/read",
        json!({"uri": secret}),
    )
    .await;
    let message = denied["error"]["message"].as_str().expect("an error");
    let ending = format!(
        "A resource read cannot ask anyone, so nothing was read; call the read tool on {} instead.",
        &secret["file://".len()..]
    );
    assert!(
        message.starts_with("The policy denies this call, so nothing ran")
            && message.contains("Secrets stay put.")
            && message.ends_with(&ending),
        "{message}"
    );
    assert!(!denied.to_string().contains("hunter2"));

    // A URI of no resource.
    let unknown = ask(
        &server,
        &session,
        5,
        "resources/read",
        json!({"uri": "notes://nothing"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
}
