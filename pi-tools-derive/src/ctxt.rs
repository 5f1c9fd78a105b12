//! Gathers every error of one expansion so they are reported together.
//!
//! As serde_derive's `Ctxt`: the context must be consumed with [`Ctxt::check`]; dropping it
//! unchecked panics, so no code path can record an error and then forget to report it.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// The errors found so far (`None` once checked).
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// An empty context, to be consumed with [`Ctxt::check`].
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanned at `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records a parse error.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("the error context was already checked")
            .push(error);
    }

    /// Consumes the context: `Ok` without errors, otherwise every error folded into one
    /// (its `to_compile_error` emits them all, each at its own span).
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("the error context was already checked")
            .into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors: call `Ctxt::check` before dropping the context");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn check_folds_every_error_in_order() {
        let cx = Ctxt::new();
        cx.error_at(proc_macro2::Span::call_site(), "first");
        cx.error_at(proc_macro2::Span::call_site(), "second");
        let messages: Vec<String> = cx
            .check()
            .expect_err("two errors were recorded")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn an_empty_context_checks_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn dropping_an_unchecked_context_panics() {
        let cx = Ctxt::new();
        cx.error_at(proc_macro2::Span::call_site(), "lost");
        drop(cx);
    }
}
