//! The `#[tool(...)]` key grammar: each key parsed into its typed value, unknown and
//! duplicate keys reported at their own token.

use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, ExprPath, Ident, Lit, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;

/// Every key the attribute accepts, in the order the rustdoc lists them.
pub const KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "snippet",
    "guidelines",
    "mode",
    "config",
    "renderer",
    "prepare",
    "read_only",
    "destructive",
    "accept_unknown_properties",
];

/// `parallel` or `sequential`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Parallel,
    Sequential,
}

/// The parsed keys; `None` when absent.
#[derive(Default)]
pub struct Attrs {
    pub name: Option<LitStr>,
    pub label: Option<LitStr>,
    pub description: Option<LitStr>,
    pub snippet: Option<LitStr>,
    pub guidelines: Option<Vec<LitStr>>,
    pub mode: Option<Mode>,
    pub config: Option<Type>,
    pub renderer: Option<Type>,
    pub prepare: Option<Path>,
    pub read_only: bool,
    pub destructive: bool,
    pub accept_unknown_properties: bool,
}

/// Parses the attribute's arguments, recording every mistake in `cx`.
pub fn parse(cx: &mut Ctxt, args: TokenStream) -> Attrs {
    let mut attrs = Attrs::default();
    let mut seen: Vec<String> = Vec::new();
    let parser = |input: ParseStream| {
        while !input.is_empty() {
            let key: Ident = input.call(Ident::parse_any_key)?;
            let key_name = key.to_string();
            let value: Option<Expr> = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                Some(input.parse()?)
            } else {
                None
            };
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            if !KEYS.contains(&key_name.as_str()) {
                cx.error_spanned_by(
                    &key,
                    format!(
                        "unknown key `{key_name}` in #[tool]: expected one of {}",
                        KEYS.join(", ")
                    ),
                );
                continue;
            }
            if seen.contains(&key_name) {
                cx.error_spanned_by(
                    &key,
                    format!("duplicate key `{key_name}` in #[tool]: remove one of them"),
                );
                continue;
            }
            seen.push(key_name.clone());
            apply(cx, &mut attrs, &key, value);
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    attrs
}

trait ParseAnyKey {
    fn parse_any_key(input: ParseStream) -> syn::Result<Ident>;
}

impl ParseAnyKey for Ident {
    fn parse_any_key(input: ParseStream) -> syn::Result<Ident> {
        use syn::ext::IdentExt;
        Ident::parse_any(input)
    }
}

fn apply(cx: &mut Ctxt, attrs: &mut Attrs, key: &Ident, value: Option<Expr>) {
    let key_name = key.to_string();
    let flag = matches!(
        key_name.as_str(),
        "read_only" | "destructive" | "accept_unknown_properties"
    );
    let value = match (value, flag) {
        (None, true) => {
            match key_name.as_str() {
                "read_only" => attrs.read_only = true,
                "destructive" => attrs.destructive = true,
                _ => attrs.accept_unknown_properties = true,
            }
            return;
        }
        (Some(v), true) => {
            cx.error_spanned_by(
                &v,
                format!("`{key_name}` is a flag and takes no value: write just `{key_name}`"),
            );
            return;
        }
        (None, false) => {
            cx.error_spanned_by(
                key,
                format!("`{key_name}` needs a value: write `{key_name} = ...`"),
            );
            return;
        }
        (Some(v), false) => v,
    };
    match key_name.as_str() {
        "name" => attrs.name = string(cx, key, &value),
        "label" => attrs.label = string(cx, key, &value),
        "description" => attrs.description = string(cx, key, &value),
        "snippet" => attrs.snippet = string(cx, key, &value),
        "guidelines" => match &value {
            Expr::Array(ExprArray { elems, .. }) => {
                attrs.guidelines = Some(elems.iter().filter_map(|e| string(cx, key, e)).collect());
            }
            other => cx.error_spanned_by(
                other,
                "`guidelines` takes a list of strings: write `guidelines = [\"...\", \"...\"]`",
            ),
        },
        "mode" => attrs.mode = mode(cx, &value),
        "config" | "renderer" => match syn::parse2::<Type>(quote::quote!(#value)) {
            Ok(ty) => {
                if key_name == "config" {
                    attrs.config = Some(ty);
                } else {
                    attrs.renderer = Some(ty);
                }
            }
            Err(_) => cx.error_spanned_by(&value, format!("`{key_name}` takes a type: write `{key_name} = MyType`")),
        },
        "prepare" => match &value {
            Expr::Path(ExprPath { path, .. }) => attrs.prepare = Some(path.clone()),
            other => cx.error_spanned_by(
                other,
                "`prepare` takes the path of a `fn(serde_json::Value) -> Result<serde_json::Value, ToolError>`: write `prepare = my_prepare`",
            ),
        },
        _ => {}
    }
}

fn string(cx: &mut Ctxt, key: &Ident, value: &Expr) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` takes a string literal: write `{key} = \"...\"`"),
            );
            None
        }
    }
}

fn mode(cx: &mut Ctxt, value: &Expr) -> Option<Mode> {
    let (word, span): (String, Span) = match value {
        Expr::Path(ExprPath { path, .. }) if path.get_ident().is_some() => {
            let ident = path.get_ident()?;
            (ident.to_string(), ident.span())
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => (s.value(), s.span()),
        other => (quote::quote!(#other).to_string(), other.span()),
    };
    match word.as_str() {
        "parallel" => Some(Mode::Parallel),
        "sequential" => Some(Mode::Sequential),
        _ => {
            cx.error_at(
                span,
                format!("invalid mode `{word}`: use `mode = parallel` or `mode = sequential`"),
            );
            None
        }
    }
}
