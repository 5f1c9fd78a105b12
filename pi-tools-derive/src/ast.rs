//! The typed model of one `#[tool]` function: its parameters classified, its docs read, its
//! return type understood. Building it never fails; `check` judges it.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lit, Meta, Pat, PathArguments,
    ReturnType, Type,
};

/// What a parameter is to the tool.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// The `ToolContext` (by `&…ToolContext` type or `#[ctx]`).
    Ctx,
    /// The typed configuration (`#[config]`).
    Config,
    /// A whole arguments struct (`#[args]`).
    Args,
    /// One property of the generated arguments struct.
    Plain,
}

/// One parameter of the function.
pub struct Param {
    pub kind: ParamKind,
    /// The parameter's name (`None` when the pattern is not a plain name).
    pub ident: Option<Ident>,
    pub ty: Type,
    /// Whether the type is a reference (for the context: pass `&ctx` or a clone).
    pub by_ref: bool,
    /// `///` lines, moved to the generated field.
    pub docs: Vec<Attribute>,
    /// `#[serde(..)]` / `#[schemars(..)]`, moved to the generated field.
    pub field_attrs: Vec<Attribute>,
    /// `#[default = value]` attributes (more than one is a mistake `check` reports).
    pub defaults: Vec<Attribute>,
    /// The parameter's name (or pattern), for spans.
    pub span: Span,
}

impl Param {
    /// The value of the first `#[default = value]`, when it is written in that form.
    pub fn default_value(&self) -> Option<&Expr> {
        match &self.defaults.first()?.meta {
            Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        }
    }
}

/// How the function's `Ok` value becomes a result.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum OkKind {
    /// `String`, `&str`, `ToolOutput<D>`, `ToolResult`, `Json<T>`: through `IntoToolResult`.
    Direct,
    /// Anything else: a typed value, whose schema is the tool's output schema and which
    /// becomes the structured result plus its text.
    Typed(Box<Type>),
}

/// The function's return type.
pub enum Return {
    /// `Result<T, E>` (any path ending in `Result`).
    Result(OkKind),
    /// No return type.
    Missing(Span),
    /// Something that is not a `Result`.
    Unsupported(Box<Type>),
}

/// The function after attribute parsing, with parameter attributes stripped (so it can be
/// emitted as is).
pub struct ToolFn {
    pub func: ItemFn,
    pub params: Vec<Param>,
    /// `self` parameters.
    pub receivers: Vec<Span>,
    pub ret: Return,
    /// The whole doc comment as the model reads it (see [`doc_text`]); `None` without one.
    pub doc_description: Option<String>,
}

impl ToolFn {
    /// Reads `func`, stripping the attributes the macro consumes from its parameters.
    pub fn from_fn(mut func: ItemFn) -> ToolFn {
        let mut params = Vec::new();
        let mut receivers = Vec::new();
        for input in func.sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => receivers.push(r.self_token.span),
                FnArg::Typed(pat_ty) => {
                    let span = pat_ty.pat.span();
                    let mut docs = Vec::new();
                    let mut field_attrs = Vec::new();
                    let mut defaults = Vec::new();
                    let mut kind = None;
                    let mut kept = Vec::new();
                    for attr in pat_ty.attrs.drain(..) {
                        let path = attr.path();
                        if path.is_ident("doc") {
                            docs.push(attr);
                        } else if path.is_ident("serde") || path.is_ident("schemars") {
                            field_attrs.push(attr);
                        } else if path.is_ident("default") {
                            defaults.push(attr);
                        } else if path.is_ident("ctx") {
                            kind = Some(ParamKind::Ctx);
                        } else if path.is_ident("args") {
                            kind = Some(ParamKind::Args);
                        } else if path.is_ident("config") {
                            kind = Some(ParamKind::Config);
                        } else {
                            kept.push(attr);
                        }
                    }
                    pat_ty.attrs = kept;
                    let ty = (*pat_ty.ty).clone();
                    let kind = kind.unwrap_or(if is_tool_context_ref(&ty) {
                        ParamKind::Ctx
                    } else {
                        ParamKind::Plain
                    });
                    let ident = match &*pat_ty.pat {
                        Pat::Ident(p) => Some(p.ident.clone()),
                        _ => None,
                    };
                    params.push(Param {
                        kind,
                        ident,
                        by_ref: matches!(ty, Type::Reference(_)),
                        ty,
                        docs,
                        field_attrs,
                        defaults,
                        span,
                    });
                }
            }
        }
        let ret = match &func.sig.output {
            ReturnType::Default => Return::Missing(func.sig.paren_token.span.close()),
            ReturnType::Type(_, ty) => classify_return(ty),
        };
        let doc_description = doc_text(&doc_lines(&func.attrs));
        ToolFn {
            func,
            params,
            receivers,
            ret,
            doc_description,
        }
    }
}

/// `&ToolContext`, `&pi_tools::ToolContext`, … (last path segment `ToolContext`).
fn is_tool_context_ref(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) => p
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "ToolContext"),
            _ => false,
        },
        _ => false,
    }
}

fn classify_return(ty: &Type) -> Return {
    let Type::Path(path) = ty else {
        return Return::Unsupported(Box::new(ty.clone()));
    };
    let Some(last) = path.path.segments.last() else {
        return Return::Unsupported(Box::new(ty.clone()));
    };
    if last.ident != "Result" {
        return Return::Unsupported(Box::new(ty.clone()));
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return Return::Unsupported(Box::new(ty.clone()));
    };
    let Some(GenericArgument::Type(ok)) = args.args.first() else {
        return Return::Unsupported(Box::new(ty.clone()));
    };
    Return::Result(ok_kind(ok))
}

fn ok_kind(ok: &Type) -> OkKind {
    let typed = || OkKind::Typed(Box::new(ok.clone()));
    match ok {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) if p.path.is_ident("str") => OkKind::Direct,
            _ => typed(),
        },
        Type::Path(p) => match p.path.segments.last() {
            Some(s)
                if ["String", "ToolOutput", "ToolResult", "Json"]
                    .iter()
                    .any(|n| s.ident == n) =>
            {
                OkKind::Direct
            }
            _ => typed(),
        },
        _ => typed(),
    }
}

/// The text of `#[doc = "..."]` attributes, one entry per line, with the leading space of
/// `/// text` removed.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|text| {
            // `split`, not `lines`: an empty `///` line is a paragraph break.
            text.split('\n')
                .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The doc comment as Markdown text for the model: paragraphs separated by a blank line,
/// the lines of a paragraph joined with spaces (as Markdown renders them), except that list
/// items and headings start a new line and fenced code blocks keep their lines as written.
/// `None` when there is no text.
pub fn doc_text(lines: &[String]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut fence: Option<&str> = None;
    for line in lines {
        let trimmed = line.trim();
        if let Some(marker) = fence {
            current.push('\n');
            current.push_str(line);
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if trimmed.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        let opens_fence = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        let text = if opens_fence.is_some() {
            line.as_str()
        } else {
            trimmed
        };
        if current.is_empty() {
            current.push_str(text);
        } else if opens_fence.is_some() || starts_block_line(trimmed) {
            current.push('\n');
            current.push_str(text);
        } else {
            current.push(' ');
            current.push_str(text);
        }
        fence = opens_fence;
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

/// A list item (`- `, `* `, `+ `, `1. `) or a heading (`# `): Markdown starts a new line.
fn starts_block_line(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    ["- ", "* ", "+ ", "#"].iter().any(|m| line.starts_with(m))
        || (digits > 0 && line[digits..].starts_with(". "))
}

/// The first paragraph of a description, on one line.
pub fn first_paragraph(text: &str) -> String {
    let first = text.split("\n\n").next().unwrap_or_default();
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `ty` is written `Option<..>` (any path ending in `Option`).
pub fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// `read_file` / `read-file` → `ReadFile`.
pub fn pascal_case(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect()
}
