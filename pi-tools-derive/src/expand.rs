//! Code generation: one function per generated item (the arguments struct, the definition
//! struct, each method of its `ToolDefinition` impl, the registration), composed by
//! [`Gen::tool`]; or, when the input has mistakes, the errors plus placeholders
//! ([`Gen::fallback`]).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, ItemFn, Lit};

use crate::ast::{Param, ParamKind, ToolFn, first_paragraph, pascal_case};
use crate::attr::{self, Attrs, Examples, Mode, Role};
use crate::check::{check, valid_tool_name};
use crate::ctxt::Ctxt;

mod output;

/// Expands `#[tool(args)] item`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(e) => {
            let error = syn::Error::new(e.span(), format!("#[tool] goes on an `async fn`: {e}"))
                .to_compile_error();
            return quote!(#item #error);
        }
    };
    let cx = Ctxt::new();
    let attrs = attr::parse(&cx, args);
    let tool = ToolFn::from_fn(func);
    check(&cx, &attrs, &tool);
    let generator = Gen::new(&attrs, &tool);
    match cx.check() {
        Ok(()) => generator.tool(),
        Err(errors) => generator.fallback(&errors),
    }
}

/// What every generated item needs: the input, the names, and the road into pi-tools.
struct Gen<'a> {
    attrs: &'a Attrs,
    tool: &'a ToolFn,
    /// `::pi_tools::__private`, or `<crate>::__private` with `crate = "..."`.
    private: TokenStream,
    tool_name: String,
    tool_struct: Ident,
    args_struct: Ident,
}

impl<'a> Gen<'a> {
    fn new(attrs: &'a Attrs, tool: &'a ToolFn) -> Self {
        let fn_name = tool.func.sig.ident.unraw().to_string();
        let tool_name = attrs
            .name
            .as_ref()
            .map(|n| n.value())
            .filter(|n| valid_tool_name(n))
            .unwrap_or(fn_name.clone());
        let mut base = pascal_case(&tool_name);
        if base.is_empty() {
            base = pascal_case(&fn_name);
        }
        let span = tool.func.sig.ident.span();
        let krate = match &attrs.krate {
            Some(path) => {
                let path = &path.0;
                quote!(#path)
            }
            None => quote!(::pi_tools),
        };
        Gen {
            attrs,
            tool,
            private: quote!(#krate::__private),
            tool_name,
            tool_struct: Ident::new(&format!("{base}Tool"), span),
            args_struct: Ident::new(&format!("{base}Args"), span),
        }
    }

    /// Everything, when the input is sound.
    fn tool(&self) -> TokenStream {
        let func = &self.tool.func;
        let args = self.args_items();
        let tool_struct = self.tool_struct();
        let definition = self.definition_impl();
        let registration = self.registration();
        quote! {
            #func
            #args
            #tool_struct
            #definition
            #registration
        }
    }

    /// On error: the function itself (so calls to it still resolve), the errors, and a
    /// placeholder definition struct (so uses of it do not add errors of their own).
    fn fallback(&self, errors: &syn::Error) -> TokenStream {
        let errors = errors.to_compile_error();
        let func = &self.tool.func;
        if !self.tool.receivers.is_empty() {
            // Inside an `impl` block only the fn may be emitted.
            return quote!(#errors #func);
        }
        let p = &self.private;
        let vis = &func.vis;
        let tool_struct = &self.tool_struct;
        quote! {
            #errors
            #func
            #[derive(Debug, Clone, Copy, Default)]
            #vis struct #tool_struct;
            impl #p::ToolDefinition for #tool_struct {
                fn spec(&self) -> &#p::ToolSpec { ::core::unreachable!() }
                fn execute(
                    &self,
                    _: #p::serde_json::Value,
                    _: #p::ToolContext,
                ) -> #p::BoxFuture<'_, #p::Result<#p::ToolResult, #p::ToolError>> {
                    ::core::unreachable!()
                }
            }
        }
    }

    fn plain_params(&self) -> impl Iterator<Item = &'a Param> {
        self.tool
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Plain)
    }

    fn args_param(&self) -> Option<&'a Param> {
        self.tool.params.iter().find(|p| p.kind == ParamKind::Args)
    }

    /// The type the arguments deserialise into: the `#[args]` type or the generated struct.
    fn args_type(&self) -> TokenStream {
        match self.args_param() {
            Some(param) => param.ty.to_token_stream(),
            None => self.args_struct.to_token_stream(),
        }
    }

    /// The arguments' items: for `#[args]`, the check of its type; otherwise the checks of
    /// each parameter type, the generated struct and the functions giving its defaults.
    fn args_items(&self) -> TokenStream {
        if let Some(param) = self.args_param() {
            return self.argument_check(param);
        }
        let checks = self.plain_params().map(|param| self.argument_check(param));
        let args_struct = self.args_struct();
        let defaults = self.default_fns();
        quote! {
            #(#checks)*
            #args_struct
            #defaults
        }
    }

    /// `Deserialize + JsonSchema` (and `Serialize` with a default, for the schema's
    /// `default`), checked at the parameter's type, unless [`Self::schema_with`] checks it.
    fn argument_check(&self, param: &Param) -> TokenStream {
        if schema_checks(param) {
            return TokenStream::new();
        }
        let p = &self.private;
        let ty = &param.ty;
        let check = if param.default_value().is_some() {
            quote!(assert_default_argument)
        } else {
            quote!(assert_tool_argument)
        };
        quote_spanned! {ty.span()=>
            const _: () = #p::#check::<#ty>();
        }
    }

    /// `struct <Pascal>Args { ... }`, deriving `Deserialize` and `JsonSchema` through
    /// pi-tools' own re-exports.
    fn args_struct(&self) -> TokenStream {
        let p = &self.private;
        let vis = &self.tool.func.vis;
        let args_struct = &self.args_struct;
        // The path as text for `crate = "..."` (token spacing removed).
        let serde_crate = format!("{p}::serde").replace(' ', "");
        let schemars_crate = format!("{p}::schemars").replace(' ', "");
        let fields = self.plain_params().map(|param| {
            let ident = &param.ident;
            let ty = &param.ty;
            let docs = &param.docs;
            let field_attrs = &param.field_attrs;
            let default = param.default_value().map(|_| {
                let path = format!("{args_struct}::{}", default_fn(param));
                quote!(#[serde(default = #path)])
            });
            let schema = self.schema_with(param);
            quote!(#(#docs)* #(#field_attrs)* #default #schema #vis #ident: #ty,)
        });
        let doc = format!(
            "The arguments of the `{}` tool (generated by `#[tool]` from [`{}`]).",
            self.tool_name, self.tool.func.sig.ident
        );
        quote! {
            #[doc = #doc]
            #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
            #[serde(crate = #serde_crate)]
            #[schemars(crate = #schemars_crate)]
            #vis struct #args_struct {
                #(#fields)*
            }
        }
    }

    /// `#[schemars(schema_with = "...")]` naming pi-tools' schema function for the type,
    /// whose bound is the parameter's check (at its type): the derive needs nothing of the
    /// type, so a type without `JsonSchema` is one error, not that and the derive's bare one.
    /// An `Option`, whose optionality the derive no longer sees, gets serde's `default` (and
    /// `skip_serializing_if`, which keeps `"default": null` out of the schema).
    fn schema_with(&self, param: &Param) -> TokenStream {
        if !schema_checks(param) {
            return TokenStream::new();
        }
        let optional = crate::ast::is_option(&param.ty).then(
            || quote!(#[serde(default, skip_serializing_if = "::core::option::Option::is_none")]),
        );
        let function = if param.default_value().is_some() {
            "default_param_schema"
        } else {
            "param_schema"
        };
        let ty = &param.ty;
        let path = format!(
            "{}::{function}::<{}>",
            self.private.to_string().replace(' ', ""),
            ty.to_token_stream()
        );
        let path = syn::LitStr::new(&path, ty.span());
        quote!(#optional #[schemars(schema_with = #path)])
    }

    /// One function per `#[default = value]`, named by the field's `#[serde(default)]`: a
    /// string literal goes through `From<&str>` (so `"."` gives a `String`; for a type
    /// without it, the error shows an enum's form, `Type::Variant`), any other value is used
    /// as written.
    fn default_fns(&self) -> TokenStream {
        let p = &self.private;
        let fns: Vec<TokenStream> = self
            .plain_params()
            .filter_map(|param| {
                let value = param.default_value()?;
                let name = default_fn(param);
                let ty = &param.ty;
                let value = match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => quote_spanned!(s.span()=> #p::default_from_str::<#ty>(#s)),
                    other => quote_spanned!(other.span()=> #other),
                };
                Some(quote! {
                    #[doc(hidden)]
                    fn #name() -> #ty {
                        #value
                    }
                })
            })
            .collect();
        if fns.is_empty() {
            return TokenStream::new();
        }
        let args_struct = &self.args_struct;
        quote! {
            impl #args_struct {
                #(#fns)*
            }
        }
    }

    /// The unit struct named after the tool.
    fn tool_struct(&self) -> TokenStream {
        let vis = &self.tool.func.vis;
        let tool_struct = &self.tool_struct;
        let doc = format!(
            "The `{}` tool (generated by `#[tool]` from [`{}`]).",
            self.tool_name, self.tool.func.sig.ident
        );
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy, Default)]
            #vis struct #tool_struct;
        }
    }

    /// `impl ToolDefinition for <Pascal>Tool`: the spec, built once, and the behaviour.
    fn definition_impl(&self) -> TokenStream {
        let p = &self.private;
        let tool_struct = &self.tool_struct;
        let spec = self.spec_method();
        let prepare = self.prepare_method();
        let execute = self.execute_method();
        let renderer = self.renderer_methods();
        quote! {
            impl #p::ToolDefinition for #tool_struct {
                #spec
                #prepare
                #execute
                #renderer
            }
        }
    }

    /// `spec()`: one `ToolSpec` per tool, built on first use (the schema comes from
    /// schemars at run time) and kept in a `static`.
    fn spec_method(&self) -> TokenStream {
        let p = &self.private;
        let fields = [
            self.text_fields(),
            self.parameters_field(),
            self.output_schema_field(),
            self.mode_field(),
            self.config_field(),
            self.flag_fields(),
            self.role_field(),
            self.examples_field(),
            self.source_field(),
        ];
        quote! {
            fn spec(&self) -> &#p::ToolSpec {
                static SPEC: #p::OnceLock<#p::ToolSpec> = #p::OnceLock::new();
                SPEC.get_or_init(|| #p::ToolSpec {
                    #(#fields)*
                })
            }
        }
    }

    /// The description: `description = "..."`, else the whole doc comment.
    fn description(&self) -> String {
        self.attrs
            .description
            .as_ref()
            .map(|d| d.value())
            .or_else(|| self.tool.doc_description.clone())
            .unwrap_or_default()
    }

    /// `name`, `label`, `description`, `snippet` (by default the description's first
    /// paragraph) and `guidelines`.
    fn text_fields(&self) -> TokenStream {
        let p = &self.private;
        let tool_name = &self.tool_name;
        let label = self
            .attrs
            .label
            .as_ref()
            .map_or_else(|| tool_name.clone(), |l| l.value());
        let description = self.description();
        let snippet = self
            .attrs
            .snippet
            .as_ref()
            .map_or_else(|| first_paragraph(&description), |s| s.value());
        let guidelines = self.attrs.guidelines.iter().flatten().map(|g| g.value());
        quote! {
            name: #p::String::from(#tool_name),
            label: #p::String::from(#label),
            description: #p::String::from(#description),
            snippet: #p::Option::Some(#p::String::from(#snippet)),
            guidelines: #p::Vec::from([#(#p::String::from(#guidelines)),*]),
        }
    }

    /// The canonical schema.
    fn parameters_field(&self) -> TokenStream {
        let p = &self.private;
        let args_ty = self.args_type();
        quote! {
            parameters: #p::canonical_schema::<#args_ty>(),
        }
    }

    fn mode_field(&self) -> TokenStream {
        let p = &self.private;
        let mode = match self.attrs.mode {
            Some(Mode::Sequential) => quote!(#p::ExecutionMode::Sequential),
            Some(Mode::Parallel) | None => quote!(#p::ExecutionMode::Parallel),
        };
        quote!(mode: #mode,)
    }

    fn prepare_method(&self) -> TokenStream {
        let p = &self.private;
        let Some(path) = &self.attrs.prepare else {
            return TokenStream::new();
        };
        quote! {
            fn prepare_arguments(
                &self,
                args: #p::serde_json::Value,
            ) -> #p::Result<#p::serde_json::Value, #p::ToolError> {
                #path(args)
            }
        }
    }

    /// Parses the arguments, reads the configuration, calls the fn and converts its result.
    fn execute_method(&self) -> TokenStream {
        let p = &self.private;
        let bind_args = self.bind_args();
        let bind_config = self.bind_config();
        let call = self.call();
        let ok = self.ok_conversion();
        quote! {
            fn execute(
                &self,
                __pi_args: #p::serde_json::Value,
                __pi_ctx: #p::ToolContext,
            ) -> #p::BoxFuture<'_, #p::Result<#p::ToolResult, #p::ToolError>> {
                #p::Box::pin(async move {
                    #[allow(
                        unused_imports,
                        reason = "a fn whose error type is one of the two uses only one of these traits, so an `expect` would fail for the other"
                    )]
                    use #p::{DisplayToolError as _, KeepToolError as _};
                    #bind_args
                    #bind_config
                    match #call.await {
                        #p::Result::Ok(v) => #ok,
                        #p::Result::Err(e) => #p::Result::Err((&#p::ErrorWrap(e)).to_tool_error()),
                    }
                })
            }
        }
    }

    /// `__pi_parsed` (the `#[args]` value) or one binding per plain parameter.
    fn bind_args(&self) -> TokenStream {
        let p = &self.private;
        let tool_name = &self.tool_name;
        let args_ty = self.args_type();
        let pattern = match self.args_param() {
            Some(_) => quote!(__pi_parsed),
            None => {
                let idents = self.plain_params().map(|param| &param.ident);
                quote!(#args_ty { #(#idents),* })
            }
        };
        quote! {
            let #pattern = match #p::parse_args::<#args_ty>(#tool_name, __pi_args) {
                #p::Result::Ok(v) => v,
                #p::Result::Err(e) => return #p::Result::Err(e),
            };
        }
    }

    /// `__pi_config`, when the fn takes a `#[config]` parameter.
    fn bind_config(&self) -> TokenStream {
        let p = &self.private;
        let takes_config = self.tool.params.iter().any(|p| p.kind == ParamKind::Config);
        match &self.attrs.config {
            Some(ty) if takes_config => quote! {
                let __pi_config: &#ty = match #p::expect_config::<#ty>(&__pi_ctx) {
                    #p::Result::Ok(v) => v,
                    #p::Result::Err(e) => return #p::Result::Err(e),
                };
            },
            _ => TokenStream::new(),
        }
    }

    /// The call of the user's fn with each parameter in place, its future checked `Send`
    /// at the fn's name.
    fn call(&self) -> TokenStream {
        let p = &self.private;
        let fn_ident = &self.tool.func.sig.ident;
        let args = self.tool.params.iter().map(|param| match param.kind {
            ParamKind::Ctx if param.by_ref => quote!(&__pi_ctx),
            ParamKind::Ctx => quote!(::core::clone::Clone::clone(&__pi_ctx)),
            ParamKind::Config => quote!(__pi_config),
            ParamKind::Args => quote!(__pi_parsed),
            ParamKind::Plain => {
                let ident = &param.ident;
                quote!(#ident)
            }
        });
        quote_spanned! {fn_ident.span()=>
            #p::assert_send(#fn_ident(#(#args),*))
        }
    }

    fn config_field(&self) -> TokenStream {
        let p = &self.private;
        match &self.attrs.config {
            Some(ty) => quote!(config: #p::Option::Some(#p::config_spec::<#ty>()),),
            None => quote!(config: #p::Option::None,),
        }
    }

    /// `read_only`, `destructive` and `accepts_unknown_properties`.
    fn flag_fields(&self) -> TokenStream {
        let p = &self.private;
        let read_only = self.attrs.read_only.is_some();
        let destructive = self.attrs.destructive.is_some();
        let accept_unknown = self.attrs.accept_unknown_properties.is_some();
        quote! {
            read_only: #read_only,
            destructive: #destructive,
            accepts_unknown_properties: #accept_unknown,
            origin: #p::ToolOrigin::of_module(::core::module_path!()),
        }
    }

    /// `examples`, empty when not given.
    fn examples_field(&self) -> TokenStream {
        let p = &self.private;
        let examples = match &self.attrs.examples {
            Some(Examples(examples)) => examples.as_slice(),
            None => &[],
        };
        quote!(examples: #p::examples(&[#(#examples),*]),)
    }

    fn role_field(&self) -> TokenStream {
        let p = &self.private;
        let role = match self.attrs.role {
            Some(Role::Explore) => quote!(#p::ToolRole::Explore),
            Some(Role::Shell) => quote!(#p::ToolRole::Shell),
            Some(Role::Jobs) => quote!(#p::ToolRole::Jobs),
            None => quote!(#p::ToolRole::General),
        };
        quote!(role: #role,)
    }

    /// `file!()` and `line!()` at the fn's name.
    fn location(&self) -> TokenStream {
        let p = &self.private;
        quote_spanned! {self.tool.func.sig.ident.span()=>
            #p::SourceLocation { file: ::core::file!(), line: ::core::line!() }
        }
    }

    fn source_field(&self) -> TokenStream {
        let p = &self.private;
        let location = self.location();
        quote!(source: #p::Option::Some(#location),)
    }

    fn renderer_methods(&self) -> TokenStream {
        let p = &self.private;
        let Some(ty) = &self.attrs.renderer else {
            return TokenStream::new();
        };
        quote! {
            fn render_call(&self, args: &#p::serde_json::Value) -> #p::Styled {
                #p::ToolRenderer::render_call(&<#ty as ::core::default::Default>::default(), args)
            }
            fn render_result(&self, result: &#p::ToolResult, is_error: bool) -> #p::Styled {
                #p::ToolRenderer::render_result(&<#ty as ::core::default::Default>::default(), result, is_error)
            }
        }
    }

    /// The `inventory` registration `Registry::from_inventory` finds.
    fn registration(&self) -> TokenStream {
        let p = &self.private;
        let tool_struct = &self.tool_struct;
        let location = self.location();
        quote! {
            #p::inventory::submit! {
                #p::ToolRegistration {
                    make: #p::make_tool::<#tool_struct>,
                    location: #location,
                }
            }
        }
    }
}

/// The name of the function giving a parameter's default (`__pi_default_limit`).
fn default_fn(param: &Param) -> Ident {
    match &param.ident {
        Some(ident) => format_ident!("__pi_default_{}", ident.unraw()),
        None => format_ident!("__pi_default"),
    }
}

/// Whether a parameter's type is checked by its field's schema function
/// ([`Gen::schema_with`]) rather than by a check of its own: a plain parameter's (an
/// `#[args]` type has no generated field) without `#[schemars(...)]` of its own, nor, for an
/// `Option`, `#[serde(...)]` (whose `default` the field then gets).
fn schema_checks(param: &Param) -> bool {
    let own = |name: &str| param.field_attrs.iter().any(|a| a.path().is_ident(name));
    param.kind == ParamKind::Plain
        && !own("schemars")
        && !(crate::ast::is_option(&param.ty) && own("serde"))
}
