//! The read tool, end to end against a real directory.
#![cfg(feature = "builtins")]

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use pi_tools::builtins::read::{ReadArgs, ReadStop, read};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{ContentBlock, IntoToolResult, ToolContext, ToolResult};
use tokio_util::sync::CancellationToken;

fn ctx_in(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call-1", CancellationToken::new()).with_env(env)
}

fn args(path: &str, offset: Option<i64>, limit: Option<u64>) -> ReadArgs {
    ReadArgs {
        offset,
        limit,
        ..ReadArgs::new(path)
    }
}

async fn read_ok(dir: &Path, a: ReadArgs) -> ToolResult {
    read(&ctx_in(dir), a)
        .await
        .expect("read succeeds")
        .into_tool_result()
        .unwrap()
}

async fn read_err(dir: &Path, a: ReadArgs) -> String {
    read(&ctx_in(dir), a)
        .await
        .expect_err("read fails")
        .message()
        .to_string()
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn whole_small_file_is_returned_as_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\n").unwrap();
    let result = read_ok(dir.path(), args("f.txt", None, None)).await;
    assert_eq!(result.text_content(), "a\nb\nc\n");
    assert_eq!(result.details["totalLines"], 3);
    assert_eq!(result.details["startLine"], 1);
    assert_eq!(result.details["endLine"], 3);
    assert!(result.details.get("nextOffset").is_none());
}

#[tokio::test]
async fn the_text_comes_back_with_its_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&str, &[u8], &str, u64); 5] = [
        ("lf.txt", b"a\nb\n", "a\nb\n", 2),
        ("crlf.txt", b"a\r\nb\r\n", "a\r\nb\r\n", 2),
        ("open.txt", b"a\nb", "a\nb", 2),
        ("open_crlf.txt", b"a\r\nb", "a\r\nb", 2),
        ("empty.txt", b"", "", 0),
    ];
    for (name, bytes, text, lines) in cases {
        std::fs::write(d.join(name), bytes).unwrap();
        let result = read_ok(d, args(name, None, None)).await;
        assert_eq!(result.text_content(), text, "{name}");
        assert_eq!(result.details["totalLines"], lines, "{name}");
        assert!(result.details.get("nextOffset").is_none(), "{name}");
    }
    // A window keeps the line ending of its last line; the notice follows one empty line.
    std::fs::write(d.join("w.txt"), "a\r\nb\r\nc\r\n").unwrap();
    assert_eq!(
        read_ok(d, args("w.txt", Some(2), Some(1)))
            .await
            .text_content(),
        "b\r\n\n[1 more line in the file. Use offset=3 to continue.]"
    );
    assert_eq!(
        read_ok(d, args("w.txt", Some(3), None))
            .await
            .text_content(),
        "c\r\n"
    );
    // Blank lines at the end are lines of the text too.
    std::fs::write(d.join("blank.txt"), "a\n\n").unwrap();
    assert_eq!(
        read_ok(d, args("blank.txt", None, None))
            .await
            .text_content(),
        "a\n\n"
    );
}

#[tokio::test]
async fn a_leading_at_and_unicode_spaces_are_forgiven() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my file.txt"), "x").unwrap();
    let result = read_ok(dir.path(), args("@my\u{00A0}file.txt", None, None)).await;
    assert_eq!(result.text_content(), "x");
}

#[tokio::test]
async fn curly_apostrophe_and_nfd_names_are_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("it\u{2019}s.txt"), "curly").unwrap();
    std::fs::write(dir.path().join("cafe\u{0301}.txt"), "nfd").unwrap();
    assert_eq!(
        read_ok(dir.path(), args("it's.txt", None, None))
            .await
            .text_content(),
        "curly"
    );
    assert_eq!(
        read_ok(dir.path(), args("caf\u{e9}.txt", None, None))
            .await
            .text_content(),
        "nfd"
    );
}

#[tokio::test]
async fn missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let message = read_err(dir.path(), args("nope.txt", None, None)).await;
    assert!(message.starts_with("File not found: nope.txt"), "{message}");
}

#[tokio::test]
async fn line_limit_truncation_says_where_to_continue() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), numbered(2500)).unwrap();
    let result = read_ok(dir.path(), args("f.txt", None, None)).await;
    let expected_body: Vec<String> = (1..=2000).map(|i| format!("line {i}")).collect();
    assert_eq!(
        result.text_content(),
        format!(
            "{}\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]",
            expected_body.join("\n")
        )
    );
    assert_eq!(result.details["nextOffset"], 2001);
    assert_eq!(result.details["stoppedBy"], "lines");
}

#[tokio::test]
async fn byte_limit_truncation_keeps_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let line = "x".repeat(999);
    let content: String = (0..100).map(|_| format!("{line}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), content).unwrap();
    let result = read_ok(dir.path(), args("f.txt", None, None)).await;
    // 51 lines of 999 bytes plus 50 newlines = 50,999 bytes; a 52nd would pass 51,200.
    let body = vec![line.as_str(); 51].join("\n");
    assert_eq!(
        result.text_content(),
        format!("{body}\n\n[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]")
    );
    assert_eq!(result.details["stoppedBy"], "bytes");
}

#[tokio::test]
async fn offset_and_limit_select_a_window() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\nd\ne\n").unwrap();
    let d = dir.path();
    assert_eq!(
        read_ok(d, args("f.txt", Some(3), None))
            .await
            .text_content(),
        "c\nd\ne\n"
    );
    assert_eq!(
        read_ok(d, args("f.txt", None, Some(2)))
            .await
            .text_content(),
        "a\nb\n\n[3 more lines in the file. Use offset=3 to continue.]"
    );
    assert_eq!(
        read_ok(d, args("f.txt", Some(2), Some(2)))
            .await
            .text_content(),
        "b\nc\n\n[2 more lines in the file. Use offset=4 to continue.]"
    );
    // A limit that reaches exactly the end says nothing more.
    assert_eq!(
        read_ok(d, args("f.txt", Some(4), Some(2)))
            .await
            .text_content(),
        "d\ne\n"
    );
    // Zero and negative offsets mean the start.
    assert_eq!(
        read_ok(d, args("f.txt", Some(0), Some(1)))
            .await
            .text_content(),
        "a\n\n[4 more lines in the file. Use offset=2 to continue.]"
    );
    assert_eq!(
        read_ok(d, args("f.txt", Some(-5), None))
            .await
            .text_content(),
        "a\nb\nc\nd\ne\n"
    );
}

#[tokio::test]
async fn offset_past_the_end_names_the_line_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\nd\ne\n").unwrap();
    assert_eq!(
        read_err(dir.path(), args("f.txt", Some(10), None)).await,
        "Offset 10 is beyond the end of f.txt, which has 5 lines. Use an offset between 1 and 5."
    );
}

#[tokio::test]
async fn a_first_line_over_the_byte_limit_explains_how_to_slice_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("big.txt"),
        format!("{}\nshort\n", "x".repeat(60_000)),
    )
    .unwrap();
    let result = read_ok(dir.path(), args("big.txt", None, None)).await;
    assert_eq!(
        result.text_content(),
        "[Line 1 is 58.6KB, over the 50.0KB limit of one read. Read part of it with bash: sed -n '1p' big.txt | head -c 51200]"
    );
    assert_eq!(result.details["stoppedBy"], "lineTooLong");
    // The next line is still reachable.
    assert_eq!(
        read_ok(dir.path(), args("big.txt", Some(2), None))
            .await
            .text_content(),
        "short\n"
    );
}

fn png_bytes(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test]
async fn images_are_recognised_by_magic_bytes_not_extension() {
    let dir = tempfile::tempdir().unwrap();
    let png = png_bytes(4, 3);
    std::fs::write(dir.path().join("picture.dat"), &png).unwrap();
    std::fs::write(dir.path().join("notes.png"), "just text\n").unwrap();

    let result = read_ok(dir.path(), args("picture.dat", None, None)).await;
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        result.content[0].as_text(),
        Some("Read image file picture.dat [image/png]")
    );
    use base64::Engine;
    let expected = base64::engine::general_purpose::STANDARD.encode(&png);
    assert_eq!(
        result.content[1],
        ContentBlock::image(expected, "image/png")
    );
    assert_eq!(result.details["imageSize"]["width"], 4);

    let text = read_ok(dir.path(), args("notes.png", None, None)).await;
    assert_eq!(text.content, vec![ContentBlock::text("just text\n")]);
}

#[tokio::test]
async fn large_images_are_downscaled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wide.png"), png_bytes(2600, 100)).unwrap();
    let result = read_ok(dir.path(), args("wide.png", None, None)).await;
    let size = &result.details["imageSize"];
    assert_eq!(
        (size["width"].as_u64(), size["height"].as_u64()),
        (Some(2000), Some(77))
    );
    assert_eq!(
        (
            size["originalWidth"].as_u64(),
            size["originalHeight"].as_u64()
        ),
        (Some(2600), Some(100))
    );
    let note = result.content[0].as_text().unwrap();
    assert!(
        note.contains("downscaled from 2600x100 to 2000x77"),
        "{note}"
    );
    let ContentBlock::Image { data, mime_type } = &result.content[1] else {
        panic!("no image block");
    };
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let decoded = image::load_from_memory(&bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (2000, 77));
    assert!(mime_type == "image/png" || mime_type == "image/jpeg");
}

#[tokio::test]
async fn binary_files_are_reported_as_binary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("blob.bin"),
        [0x7f, b'E', b'L', b'F', 0, 0, 1, 2],
    )
    .unwrap();
    std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9 au lait\n").unwrap();
    let message = read_err(dir.path(), args("blob.bin", None, None)).await;
    assert!(
        message.starts_with("blob.bin is a binary file (8 bytes)"),
        "{message}"
    );
    let message = read_err(dir.path(), args("latin1.txt", None, None)).await;
    assert!(
        message.starts_with("latin1.txt is a binary file"),
        "{message}"
    );
}

#[tokio::test]
async fn directories_are_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert_eq!(
        read_err(dir.path(), args("sub", None, None)).await,
        "sub is a directory, not a file. Use ls to list its entries."
    );
}

#[cfg(unix)]
#[tokio::test]
async fn confinement_refuses_symlinks_that_escape() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.txt"), "fine").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    let env = LocalEnv::new(dir.path())
        .with_allowed_roots([dir.path()])
        .unwrap();
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    let ctx = ToolContext::new("c", CancellationToken::new()).with_env(env);

    let ok = read(&ctx, args("ok.txt", None, None))
        .await
        .unwrap()
        .into_tool_result()
        .unwrap();
    assert_eq!(ok.text_content(), "fine");
    let escape = read(&ctx, args("link.txt", None, None)).await.unwrap_err();
    assert!(
        escape.message().contains("goes through a symbolic link to"),
        "{}",
        escape.message()
    );
    assert!(escape.message().contains("outside the allowed directories"));
    assert!(
        escape
            .message()
            .ends_with("Use a path whose real location is inside them."),
        "{}",
        escape.message()
    );
    let absolute = outside.path().join("secret.txt");
    let direct = read(&ctx, args(absolute.to_str().unwrap(), None, None))
        .await
        .unwrap_err();
    assert!(
        direct
            .message()
            .contains("is outside the allowed directories"),
        "{}",
        direct.message()
    );
}

#[test]
fn read_stop_serialises_in_camel_case() {
    assert_eq!(
        serde_json::to_value(ReadStop::LineTooLong).unwrap(),
        "lineTooLong"
    );
}

/// The largest offset and limit a model can send end in an answer, not an overflow.
#[tokio::test]
async fn the_largest_offset_and_limit_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\n").unwrap();
    let result = read_ok(dir.path(), args("f.txt", Some(2), Some(u64::MAX))).await;
    assert_eq!(result.text_content(), "b\nc\n");
    let err = read_err(dir.path(), args("f.txt", Some(i64::MAX), Some(u64::MAX))).await;
    assert_eq!(
        err,
        "Offset 9223372036854775807 is beyond the end of f.txt, which has 3 lines. Use an offset between 1 and 3."
    );
    let result = read_ok(dir.path(), args("f.txt", Some(i64::MIN), Some(1))).await;
    assert_eq!(
        result.text_content(),
        "a\n\n[2 more lines in the file. Use offset=2 to continue.]"
    );
}
