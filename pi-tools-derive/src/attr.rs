//! The `#[tool(...)]` key grammar: each key parsed into its typed value, unknown and
//! duplicate keys reported at their own token.
//!
//! Every key is declared once, in the `keys!` list below: its field in [`Attrs`], the type
//! of its value (which says how the value is written and parsed, see [`KeyValue`]) and its
//! name in the attribute. Adding a key is one line there.

use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, ExprPath, Ident, Lit, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;

/// Declares [`Attrs`] (one `Option` field per key), [`KEYS`] and the dispatch from a key's
/// name to its parser, from one list.
macro_rules! keys {
    ($($(#[doc = $doc:literal])* $field:ident: $ty:ty = $key:literal,)*) => {
        /// The parsed keys; `None` when absent.
        #[derive(Default)]
        pub struct Attrs {
            $($(#[doc = $doc])* pub $field: Option<$ty>,)*
        }

        /// Every key the attribute accepts, in the order the rustdoc lists them.
        pub const KEYS: &[&str] = &[$($key),*];

        /// Parses `value` into the field of `key`; `false` when the key is unknown.
        fn set(cx: &Ctxt, attrs: &mut Attrs, key: &Ident, value: Option<Expr>) -> bool {
            match key.to_string().as_str() {
                $($key => {
                    if attrs.$field.is_some() {
                        duplicate(cx, key);
                    } else {
                        attrs.$field = <$ty as KeyValue>::parse(cx, key, value);
                    }
                })*
                _ => return false,
            }
            true
        }
    };
}

keys! {
    /// `name = "..."`.
    name: LitStr = "name",
    /// `label = "..."`.
    label: LitStr = "label",
    /// `description = "..."`.
    description: LitStr = "description",
    /// `snippet = "..."`.
    snippet: LitStr = "snippet",
    /// `guidelines = ["...", ...]`.
    guidelines: Vec<LitStr> = "guidelines",
    /// `mode = parallel | sequential`.
    mode: Mode = "mode",
    /// `role = explore | shell | jobs`.
    role: Role = "role",
    /// `config = Type`.
    config: Type = "config",
    /// `renderer = Type`.
    renderer: Type = "renderer",
    /// `prepare = path`.
    prepare: Path = "prepare",
    /// `text = path`: the text a typed result is given for the model.
    text: TextFn = "text",
    /// `output = Type`: the output schema of a tool that sets its structured result itself.
    output: Type = "output",
    /// The `read_only` flag.
    read_only: Flag = "read_only",
    /// The `destructive` flag.
    destructive: Flag = "destructive",
    /// The `accept_unknown_properties` flag.
    accept_unknown_properties: Flag = "accept_unknown_properties",
    /// `crate = "path"`: where generated code finds pi-tools.
    krate: CratePath = "crate",
    /// `examples = [r#"{...}"#, ...]`: example arguments, JSON objects checked here.
    examples: Examples = "examples",
}

/// `parallel` or `sequential`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Parallel,
    Sequential,
}

/// The tool's part in the prompt's exploration rule (`pi_tools::ToolRole`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    Explore,
    Shell,
    Jobs,
}

/// A flag key, present without a value.
#[derive(Clone, Copy, Debug)]
pub struct Flag;

/// The path generated code reaches pi-tools through (`crate = "..."`).
pub struct CratePath(pub Path);

/// How a key's value is written and read.
trait KeyValue: Sized {
    /// Parses the value written after `key =` (`None` for a bare key), recording mistakes.
    fn parse(cx: &Ctxt, key: &Ident, value: Option<Expr>) -> Option<Self> {
        match value {
            Some(value) => Self::parse_value(cx, key, &value),
            None => {
                cx.error_spanned_by(key, format!("`{key}` needs a value: write `{key} = ...`"));
                None
            }
        }
    }

    /// Parses a given value.
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self>;
}

impl KeyValue for LitStr {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
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
}

impl KeyValue for Vec<LitStr> {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match value {
            Expr::Array(ExprArray { elems, .. }) => Some(
                elems
                    .iter()
                    .filter_map(|e| LitStr::parse_value(cx, key, e))
                    .collect(),
            ),
            other => {
                cx.error_spanned_by(
                    other,
                    format!("`{key}` takes a list of strings: write `{key} = [\"...\", \"...\"]`"),
                );
                None
            }
        }
    }
}

/// `examples = [r#"{...}"#, ...]`: JSON objects in string literals, checked at expansion so
/// a typo is a compile error at its literal.
pub struct Examples(pub Vec<LitStr>);

impl KeyValue for Examples {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        let Expr::Array(ExprArray { elems, .. }) = value else {
            cx.error_spanned_by(
                value,
                "`examples` takes a list of JSON objects in string literals: write `examples = [r#\"{\"path\": \"a.txt\"}\"#]`",
            );
            return None;
        };
        let mut out = Vec::new();
        for elem in elems {
            let Some(lit) = LitStr::parse_value(cx, key, elem) else {
                continue;
            };
            match serde_json::from_str::<serde_json::Value>(&lit.value()) {
                Ok(serde_json::Value::Object(_)) => out.push(lit),
                Ok(_) => cx.error_spanned_by(
                    &lit,
                    "an example is the arguments of one call: write a JSON object, `{...}`",
                ),
                Err(e) => cx.error_spanned_by(
                    &lit,
                    format!("this example is not valid JSON ({e}): fix it so it parses"),
                ),
            }
        }
        Some(Examples(out))
    }
}

impl KeyValue for Type {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match syn::parse2::<Type>(quote::quote!(#value)) {
            Ok(ty) => Some(ty),
            Err(_) => {
                cx.error_spanned_by(
                    value,
                    format!("`{key}` takes a type: write `{key} = MyType`"),
                );
                None
            }
        }
    }
}

impl KeyValue for Path {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match value {
            Expr::Path(ExprPath { path, .. }) => Some(path.clone()),
            other => {
                cx.error_spanned_by(
                    other,
                    format!(
                        "`{key}` takes the path of a `fn(serde_json::Value) -> Result<serde_json::Value, ToolError>`: write `{key} = my_prepare`"
                    ),
                );
                None
            }
        }
    }
}

/// `text = path`: a `fn(&T) -> String` giving the model's text of a typed result.
pub struct TextFn(pub Path);

impl KeyValue for TextFn {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match value {
            Expr::Path(ExprPath { path, .. }) => Some(TextFn(path.clone())),
            other => {
                cx.error_spanned_by(
                    other,
                    format!(
                        "`{key}` takes the path of a `fn(&T) -> String`, T being the tool's result type: write `{key} = my_text`"
                    ),
                );
                None
            }
        }
    }
}

impl KeyValue for Flag {
    fn parse(cx: &Ctxt, key: &Ident, value: Option<Expr>) -> Option<Self> {
        match value {
            None => Some(Flag),
            Some(value) => Self::parse_value(cx, key, &value),
        }
    }

    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        cx.error_spanned_by(
            value,
            format!("`{key}` is a flag and takes no value: write just `{key}`"),
        );
        None
    }
}

impl KeyValue for Mode {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match word(value) {
            (w, _) if w == "parallel" => Some(Mode::Parallel),
            (w, _) if w == "sequential" => Some(Mode::Sequential),
            (w, span) => {
                cx.error_at(
                    span,
                    format!("invalid {key} `{w}`: use `{key} = parallel` or `{key} = sequential`"),
                );
                None
            }
        }
    }
}

impl KeyValue for Role {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        match word(value) {
            (w, _) if w == "explore" => Some(Role::Explore),
            (w, _) if w == "shell" => Some(Role::Shell),
            (w, _) if w == "jobs" => Some(Role::Jobs),
            (w, span) => {
                cx.error_at(
                    span,
                    format!(
                        "invalid {key} `{w}`: use `{key} = explore` (the tool lists, finds or searches files) `{key} = shell` (the tool runs shell commands) or `{key} = jobs` (the tool works on the session's background jobs)"
                    ),
                );
                None
            }
        }
    }
}

impl KeyValue for CratePath {
    fn parse_value(cx: &Ctxt, key: &Ident, value: &Expr) -> Option<Self> {
        let lit = LitStr::parse_value(cx, key, value)?;
        match lit.parse::<Path>() {
            Ok(path) => Some(CratePath(path)),
            Err(_) => {
                cx.error_spanned_by(
                    &lit,
                    format!(
                        "`{key}` takes the path of the pi-tools crate as your crate names it, e.g. `{key} = \"my_pi_tools\"`"
                    ),
                );
                None
            }
        }
    }
}

/// The word of `mode = parallel` or `mode = "parallel"`, with its span.
fn word(value: &Expr) -> (String, Span) {
    match value {
        Expr::Path(ExprPath { path, .. }) if path.get_ident().is_some() => {
            let ident = path.get_ident().map_or_else(String::new, Ident::to_string);
            (ident, path.span())
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => (s.value(), s.span()),
        other => (quote::quote!(#other).to_string(), other.span()),
    }
}

fn duplicate(cx: &Ctxt, key: &Ident) {
    cx.error_spanned_by(
        key,
        format!("duplicate key `{key}` in #[tool]: remove one of them"),
    );
}

/// Parses the attribute's arguments, recording every mistake in `cx`.
pub fn parse(cx: &Ctxt, args: TokenStream) -> Attrs {
    let mut attrs = Attrs::default();
    let parser = |input: ParseStream| {
        while !input.is_empty() {
            // `crate` is a keyword: read any identifier.
            let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let value: Option<Expr> = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                Some(input.parse()?)
            } else {
                None
            };
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            if !set(cx, &mut attrs, &key, value) {
                cx.error_spanned_by(
                    &key,
                    format!(
                        "unknown key `{key}` in #[tool]: expected one of {}",
                        KEYS.join(", ")
                    ),
                );
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    attrs
}
