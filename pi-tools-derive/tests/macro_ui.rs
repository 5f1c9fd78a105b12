//! Compile-time behaviour of `#[tool]`: the mistakes it reports (each at its token, with the
//! fix in the message) and the forms it accepts.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/keys/*.rs");
    t.compile_fail("tests/ui/signature/*.rs");
    t.compile_fail("tests/ui/params/*.rs");
    t.compile_fail("tests/ui/defaults/*.rs");
    t.compile_fail("tests/ui/future/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
