//! Semantic checks of a parsed `#[tool]`: every mistake is recorded, at its own token. Each
//! `check_*` judges one aspect; [`check`] runs them all.

use syn::Meta;

use crate::ast::{OkKind, Param, ParamKind, Return, ToolFn, is_option};
use crate::attr::Attrs;
use crate::ctxt::Ctxt;

/// Whether `name` matches `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (the strictest provider's rule).
pub fn valid_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok && name.len() <= 64 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Records every mistake in the attribute and the function.
pub fn check(cx: &Ctxt, attrs: &Attrs, tool: &ToolFn) {
    check_name(cx, attrs);
    check_signature(cx, tool);
    check_description(cx, attrs, tool);
    check_params(cx, attrs, tool);
    for param in &tool.params {
        check_default(cx, param);
    }
    check_return(cx, tool);
    check_output(cx, attrs, tool);
}

fn check_name(cx: &Ctxt, attrs: &Attrs) {
    if let Some(name) = &attrs.name
        && !valid_tool_name(&name.value())
    {
        cx.error_spanned_by(
            name,
            format!(
                "invalid tool name {:?}: a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ (letters, digits, `_` and `-`, at most 64 characters, not starting with a digit)",
                name.value()
            ),
        );
    }
}

fn check_signature(cx: &Ctxt, tool: &ToolFn) {
    let sig = &tool.func.sig;
    if sig.asyncness.is_none() {
        cx.error_spanned_by(
            sig.fn_token,
            "#[tool] needs an `async fn`: add `async` before `fn`",
        );
    }
    for span in &tool.receivers {
        cx.error_at(
            *span,
            "#[tool] functions cannot take `self`: make the tool a free `async fn` and reach shared state through `ctx.extensions()`",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "#[tool] functions cannot be generic: the arguments struct and the schema need concrete types; remove the generic parameters",
        );
    }
}

fn check_description(cx: &Ctxt, attrs: &Attrs, tool: &ToolFn) {
    if attrs.description.is_none() && tool.doc_description.is_none() {
        cx.error_spanned_by(
            &tool.func.sig.ident,
            "a tool needs a description for the model: add a `///` doc comment to the fn or `description = \"...\"` to #[tool]",
        );
    }
}

/// At most one context, configuration and `#[args]` parameter; `#[args]` alone.
fn check_params(cx: &Ctxt, attrs: &Attrs, tool: &ToolFn) {
    let mut ctx_seen = false;
    let mut config_seen = false;
    let mut args_seen = false;
    let has_args = tool.params.iter().any(|p| p.kind == ParamKind::Args);
    for param in &tool.params {
        match param.kind {
            ParamKind::Ctx => {
                if ctx_seen {
                    cx.error_at(
                        param.span,
                        "a tool takes at most one context parameter: remove this one and use the first",
                    );
                }
                ctx_seen = true;
            }
            ParamKind::Config => {
                if config_seen {
                    cx.error_at(
                        param.span,
                        "a tool takes at most one #[config] parameter: remove this one",
                    );
                }
                config_seen = true;
                if attrs.config.is_none() {
                    cx.error_at(
                        param.span,
                        "a #[config] parameter needs the configuration type in the attribute: add `config = MyConfig` to #[tool]",
                    );
                }
                if !param.by_ref {
                    cx.error_spanned_by(
                        &param.ty,
                        "a #[config] parameter is borrowed: write `&MyConfig`",
                    );
                }
            }
            ParamKind::Args => {
                if args_seen {
                    cx.error_at(
                        param.span,
                        "a tool takes at most one #[args] parameter: merge the structs into one",
                    );
                }
                args_seen = true;
            }
            ParamKind::Plain => {
                if has_args {
                    cx.error_at(
                        param.span,
                        "#[args] cannot be mixed with plain parameters: move this parameter into the #[args] struct as a field",
                    );
                }
                if param.ident.is_none() {
                    cx.error_at(
                        param.span,
                        "a tool parameter needs a plain name (it becomes a JSON property): write `name: Type`",
                    );
                }
            }
        }
    }
}

/// `#[default = value]`: once, in that form, on a plain parameter whose type is not `Option`
/// and that has no serde default of its own.
fn check_default(cx: &Ctxt, param: &Param) {
    let Some(first) = param.defaults.first() else {
        return;
    };
    for extra in &param.defaults[1..] {
        cx.error_spanned_by(
            extra,
            "a parameter takes at most one #[default = ...]: remove this one",
        );
    }
    if !matches!(first.meta, Meta::NameValue(_)) {
        cx.error_spanned_by(
            first,
            "write the default as `#[default = value]`, e.g. `#[default = 100] limit: u64`",
        );
    }
    if param.kind != ParamKind::Plain {
        cx.error_spanned_by(
            first,
            "#[default = ...] goes on a plain parameter (a property of the arguments); in an #[args] struct use `#[serde(default = \"path\")]` on the field",
        );
        return;
    }
    if is_option(&param.ty) {
        cx.error_spanned_by(
            &param.ty,
            "a parameter with a #[default] is not optional to the fn: write the inner type (e.g. `limit: u64`, not `Option<u64>`); the fn receives the default when the argument is absent",
        );
    }
    if param.field_attrs.iter().any(has_serde_default) {
        cx.error_spanned_by(
            first,
            "#[default = ...] and #[serde(default)] both give this parameter a default: keep one",
        );
    }
}

/// `#[serde(default)]` or `#[serde(default = "...")]`.
fn has_serde_default(attr: &syn::Attribute) -> bool {
    if !attr.path().is_ident("serde") {
        return false;
    }
    let mut found = false;
    // A malformed list is serde's to report; here it only means "no default seen".
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("default") {
            found = true;
        }
        if meta.input.peek(syn::Token![=]) {
            meta.value()?.parse::<syn::Expr>()?;
        } else if meta.input.peek(syn::token::Paren) {
            // `rename(serialize = "..")` and the like: skip the list.
            let list;
            syn::parenthesized!(list in meta.input);
            list.parse::<proc_macro2::TokenStream>()?;
        }
        Ok(())
    });
    found
}

fn check_return(cx: &Ctxt, tool: &ToolFn) {
    match &tool.ret {
        Return::Result(_) => {}
        Return::Missing(span) => cx.error_at(
            *span,
            "a #[tool] fn must return `Result<T, E>` (T: String, ToolOutput<D>, ToolResult, or a typed value that is Serialize + JsonSchema; E: Display): add a return type",
        ),
        Return::Unsupported(ty) => cx.error_spanned_by(
            ty,
            "unsupported return type: a #[tool] fn must return `Result<T, E>` (T: String, ToolOutput<D>, ToolResult, or a typed value that is Serialize + JsonSchema; E: Display); wrap the value in `Ok(..)`",
        ),
    }
}

/// `text = ...` needs a typed result to render; `output = Type` is for a tool whose return
/// type does not give the schema already.
fn check_output(cx: &Ctxt, attrs: &Attrs, tool: &ToolFn) {
    let typed = matches!(tool.ret, Return::Result(OkKind::Typed(_)));
    if let Some(text) = &attrs.text
        && !typed
    {
        cx.error_spanned_by(
            &text.0,
            "`text` renders a typed result, and this fn returns content (`String`, `ToolOutput`, `ToolResult` or `Json`): return the typed value itself, `Result<T, ToolError>`, or remove `text`",
        );
    }
    if let Some(output) = &attrs.output
        && typed
    {
        cx.error_spanned_by(
            output,
            "this fn returns a typed value, whose type is already the output schema: remove `output`",
        );
    }
}
