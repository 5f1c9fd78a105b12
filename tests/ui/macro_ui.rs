//! Compile-time behaviour of `#[tool]`: the mistakes it reports, each at its token with the
//! fix in the message. The forms it accepts are compiled and run with the other tests (the
//! kernel binary's `macro_forms`), so trybuild only checks these cases, never builds them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("keys/*.rs");
    t.compile_fail("signature/*.rs");
    t.compile_fail("params/*.rs");
    t.compile_fail("defaults/*.rs");
    t.compile_fail("future/*.rs");
    t.compile_fail("output/*.rs");
}
