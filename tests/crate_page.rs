//! What a newcomer reads first: the library's README (the crate page) and the rustdoc. Their
//! code copies into a crate that has only the dependencies the README's `cargo add` lines
//! give, and their links lead somewhere from the crate registry and docs.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package is in the workspace")
        .to_path_buf()
}

/// The roots of the `use` paths in the Rust code blocks of `markdown`, hidden lines (`# …`)
/// left out: what a reader copies.
fn shown_use_roots(markdown: &str) -> Vec<String> {
    let mut roots = Vec::new();
    let mut in_rust = false;
    for line in markdown.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            in_rust = !in_rust && fence.starts_with("rust");
            continue;
        }
        let Some(path) = line.trim_start().strip_prefix("use ") else {
            continue;
        };
        if in_rust && let Some((root, _)) = path.split_once("::") {
            roots.push(root.to_owned());
        }
    }
    roots
}

/// Issue: the README's agent used `serde_json` while its `cargo add` lines gave only
/// pi-tools and tokio, so a reader who copied it got "unresolved import". Every crate its
/// code uses is one the README adds (`pi_tools` re-exports serde_json and the rest).
#[test]
fn the_readmes_code_needs_only_the_crates_it_adds() {
    let readme = std::fs::read_to_string(workspace().join("pi-tools/README.md")).unwrap();
    let added: Vec<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("cargo add "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(|name| name.replace('-', "_"))
        .collect();
    assert_eq!(added, ["pi_tools", "tokio"]);
    let roots = shown_use_roots(&readme);
    assert!(roots.contains(&"pi_tools".to_owned()), "{roots:?}");
    for root in roots {
        assert!(
            root == "std" || added.contains(&root),
            "the README's code uses `{root}`, which its `cargo add` lines do not add"
        );
    }
}

/// Issue: the guide's examples imported `CancellationToken` from tokio-util, a dependency
/// the README says a program does not need. The rustdoc a reader copies names the
/// re-export, `pi_tools::CancellationToken`.
#[test]
fn the_rustdoc_takes_the_cancellation_token_from_pi_tools() {
    let mut sources = vec![workspace().join("pi-tools/src")];
    let mut found = Vec::new();
    while let Some(path) = sources.pop() {
        if path.is_dir() {
            sources.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let doc = line.starts_with("///") || line.starts_with("//!");
            if doc && line.contains("tokio_util::") {
                found.push(format!("{}:{}", path.display(), n + 1));
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

/// Runs the package link check on the directories `dirs` and returns (success, stderr).
fn check_links(dirs: &[&Path]) -> (bool, String) {
    let output = Command::new("bash")
        .arg(workspace().join("scripts/check-package-links.sh"))
        .args(dirs)
        .output()
        .expect("bash runs");
    (
        output.status.success(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Issue: the crate page's links into the repository's docs/ led nowhere. The check CI runs
/// finds a link that leaves the package in both of Markdown's forms (inline, images too, and
/// reference definitions, the form rustdoc uses most) in the README and in doc comments,
/// and lets absolute links, links inside the package and intra-doc links through.
#[test]
fn the_link_check_finds_inline_and_reference_links_that_leave_the_package() {
    let package = tempfile::tempdir().unwrap();
    let dir = package.path();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("README.md"),
        "# p\n\
         See [the guide](https://docs.rs/p) and [the source](src/lib.rs).\n\
         See [safety](../docs/safety.md) and ![logo](docs/logo.png).\n\
         \n\
         [agent]: ../examples/agent.rs\n\
         [home]: <https://example.org/p>\n\
         [lib]: src/lib.rs#L1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "//! The [`Toolbox`] and [the safety model][safety].\n\
         //!\n\
         //! [`Toolbox`]: crate::toolbox::Toolbox\n\
         //! [safety]: <../../docs/safety.md>\n\
         // [not rendered](../nowhere.md)\n\
         /// A [module](self::inner) and [a file](../Cargo.toml).\n\
         pub mod inner {}\n",
    )
    .unwrap();
    let (ok, stderr) = check_links(&[dir]);
    assert!(!ok);
    let d = dir.display();
    let lead = |file: &str, line: u32, target: &str| {
        format!(
            "{d}/{file}:{line}: the link `{target}` leads outside the {d} package; make it \
             absolute (https://…) or point at a file inside it"
        )
    };
    let expected = [
        lead("README.md", 3, "../docs/safety.md"),
        lead("README.md", 3, "docs/logo.png"),
        lead("README.md", 5, "../examples/agent.rs"),
        lead("src/lib.rs", 4, "../../docs/safety.md"),
        lead("src/lib.rs", 6, "../Cargo.toml"),
        "5 link(s) in the published packages lead nowhere".to_owned(),
    ];
    assert_eq!(stderr.lines().collect::<Vec<_>>(), expected);
}

/// What the packages ship passes the check (CI runs it on the packages' file lists).
#[test]
fn the_published_packages_link_only_to_what_exists() {
    let root = workspace();
    let (ok, stderr) = check_links(&[
        &root.join("pi-tools"),
        &root.join("pi-tools-derive"),
        &root.join("pi-tools-sandbox"),
    ]);
    assert!(ok, "{stderr}");
}
