//! Code generation: the arguments struct, the definition struct, its `ToolDefinition` impl
//! and the registration; or, when the input has mistakes, the errors plus placeholders.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use crate::ast::{OkKind, ParamKind, Return, ToolFn, pascal_case};
use crate::attr::{self, Attrs, Mode};
use crate::check::{check, valid_tool_name};
use crate::ctxt::Ctxt;

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
    let mut cx = Ctxt::default();
    let attrs = attr::parse(&mut cx, args);
    let tool = ToolFn::from_fn(func);
    check(&mut cx, &attrs, &tool);
    let names = Names::new(&attrs, &tool);
    if cx.has_errors() {
        return fallback(&cx, &tool, &names);
    }
    generate(&attrs, &tool, &names)
}

/// The names of the tool and the generated items.
struct Names {
    tool_name: String,
    tool_struct: Ident,
    args_struct: Ident,
}

impl Names {
    fn new(attrs: &Attrs, tool: &ToolFn) -> Names {
        let fn_name = tool.func.sig.ident.to_string();
        let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned();
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
        Names {
            tool_struct: Ident::new(&format!("{base}Tool"), span),
            args_struct: Ident::new(&format!("{base}Args"), span),
            tool_name,
        }
    }
}

/// On error: the function itself (so calls to it still resolve), the errors, and a
/// placeholder definition struct (so uses of it do not add errors of their own).
fn fallback(cx: &Ctxt, tool: &ToolFn, names: &Names) -> TokenStream {
    let errors = cx.to_compile_errors();
    let func = &tool.func;
    if !tool.receivers.is_empty() {
        // Inside an `impl` block only the fn may be emitted.
        return quote!(#errors #func);
    }
    let vis = &func.vis;
    let tool_struct = &names.tool_struct;
    quote! {
        #errors
        #func
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #tool_struct;
        impl ::pi_tools::__private::ToolDefinition for #tool_struct {
            fn name(&self) -> &str { ::core::unreachable!() }
            fn description(&self) -> &str { ::core::unreachable!() }
            fn parameters(&self) -> &::pi_tools::__private::serde_json::Value { ::core::unreachable!() }
            fn execute(
                &self,
                _: ::pi_tools::__private::serde_json::Value,
                _: ::pi_tools::__private::ToolContext,
            ) -> ::pi_tools::__private::BoxFuture<'_, ::pi_tools::__private::Result<::pi_tools::__private::ToolResult, ::pi_tools::__private::ToolError>> {
                ::core::unreachable!()
            }
        }
    }
}

fn lit_opt(value: Option<String>) -> TokenStream {
    match value {
        Some(v) => quote!(::pi_tools::__private::Option::Some(#v)),
        None => quote!(::pi_tools::__private::Option::None),
    }
}

fn generate(attrs: &Attrs, tool: &ToolFn, names: &Names) -> TokenStream {
    let func = &tool.func;
    let vis = &func.vis;
    let fn_ident = &func.sig.ident;
    let fn_span = fn_ident.span();
    let tool_name = &names.tool_name;
    let tool_struct = &names.tool_struct;
    let p = quote!(::pi_tools::__private);

    // The arguments: a generated struct of the plain parameters, or the #[args] type.
    let plain: Vec<_> = tool
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Plain)
        .collect();
    let args_param = tool.params.iter().find(|p| p.kind == ParamKind::Args);
    let (args_struct_def, args_ty, bind_args) = match args_param {
        Some(param) => {
            let ty = &param.ty;
            let bind = quote!(let __pi_parsed: #ty = match #p::parse_args::<#ty>(#tool_name, __pi_args) {
                #p::Result::Ok(v) => v,
                #p::Result::Err(e) => return #p::Result::Err(e),
            };);
            let check = quote_spanned! {ty.span()=>
                const _: () = #p::assert_tool_argument::<#ty>();
            };
            (check, quote!(#ty), bind)
        }
        None => {
            let args_struct = &names.args_struct;
            let fields = plain.iter().map(|param| {
                let ident = &param.ident;
                let ty = &param.ty;
                let docs = &param.docs;
                let field_attrs = &param.field_attrs;
                quote!(#(#docs)* #(#field_attrs)* #vis #ident: #ty,)
            });
            let checks = plain.iter().map(|param| {
                let ty = &param.ty;
                quote_spanned! {ty.span()=>
                    const _: () = #p::assert_tool_argument::<#ty>();
                }
            });
            let idents = plain.iter().map(|param| &param.ident);
            let doc = format!(
                "The arguments of the `{tool_name}` tool (generated by `#[tool]` from [`{fn_ident}`])."
            );
            let def = quote! {
                #(#checks)*
                #[doc = #doc]
                #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
                #[serde(crate = "::pi_tools::__private::serde")]
                #[schemars(crate = "::pi_tools::__private::schemars")]
                #vis struct #args_struct {
                    #(#fields)*
                }
            };
            let bind = quote! {
                let #args_struct { #(#idents),* } = match #p::parse_args::<#args_struct>(#tool_name, __pi_args) {
                    #p::Result::Ok(v) => v,
                    #p::Result::Err(e) => return #p::Result::Err(e),
                };
            };
            (def, quote!(#args_struct), bind)
        }
    };

    // The call of the user's fn, with each parameter in place.
    let config_ty = attrs.config.as_ref();
    let call_args = tool.params.iter().map(|param| match param.kind {
        ParamKind::Ctx if param.by_ref => quote!(&__pi_ctx),
        ParamKind::Ctx => quote!(::core::clone::Clone::clone(&__pi_ctx)),
        ParamKind::Config => quote!(__pi_config),
        ParamKind::Args => quote!(__pi_parsed),
        ParamKind::Plain => {
            let ident = &param.ident;
            quote!(#ident)
        }
    });
    let bind_config = match (
        config_ty,
        tool.params.iter().any(|p| p.kind == ParamKind::Config),
    ) {
        (Some(ty), true) => quote! {
            let __pi_config: &#ty = match #p::expect_config::<#ty>(&__pi_ctx) {
                #p::Result::Ok(v) => v,
                #p::Result::Err(e) => return #p::Result::Err(e),
            };
        },
        _ => quote!(),
    };
    let call = quote_spanned! {fn_span=>
        #p::assert_send(#fn_ident(#(#call_args),*))
    };
    let ok = match tool.ret {
        Return::Result(OkKind::Json) => quote!(#p::IntoToolResult::into_tool_result(#p::Json(v))),
        _ => quote!(#p::IntoToolResult::into_tool_result(v)),
    };

    let label = attrs
        .label
        .as_ref()
        .map_or_else(|| tool_name.clone(), |l| l.value());
    let description = attrs
        .description
        .as_ref()
        .map(|d| d.value())
        .or_else(|| tool.doc_description.clone())
        .unwrap_or_default();
    let snippet = lit_opt(attrs.snippet.as_ref().map(|s| s.value()));
    let guidelines: Vec<String> = attrs
        .guidelines
        .iter()
        .flatten()
        .map(|g| g.value())
        .collect();
    let mode = match attrs.mode {
        Some(Mode::Sequential) => quote!(#p::ExecutionMode::Sequential),
        _ => quote!(#p::ExecutionMode::Parallel),
    };
    let prepare = attrs.prepare.as_ref().map(|path| {
        quote! {
            fn prepare_arguments(
                &self,
                args: #p::serde_json::Value,
            ) -> #p::Result<#p::serde_json::Value, #p::ToolError> {
                #path(args)
            }
        }
    });
    let config = config_ty.map(|ty| {
        quote! {
            fn config(&self) -> #p::Option<#p::ToolConfigSpec> {
                #p::Option::Some(#p::config_spec::<#ty>())
            }
        }
    });
    let renderer = attrs.renderer.as_ref().map(|ty| {
        quote! {
            fn render_call(&self, args: &#p::serde_json::Value) -> #p::Styled {
                #p::ToolRenderer::render_call(&<#ty as ::core::default::Default>::default(), args)
            }
            fn render_result(&self, result: &#p::ToolResult, is_error: bool) -> #p::Styled {
                #p::ToolRenderer::render_result(&<#ty as ::core::default::Default>::default(), result, is_error)
            }
        }
    });
    let read_only = attrs.read_only.then(|| {
        quote!(
            fn read_only(&self) -> bool {
                true
            }
        )
    });
    let destructive = attrs.destructive.then(|| {
        quote!(
            fn destructive(&self) -> bool {
                true
            }
        )
    });
    let accept_unknown = attrs.accept_unknown_properties.then(|| {
        quote!(
            fn accepts_unknown_properties(&self) -> bool {
                true
            }
        )
    });
    let location = quote_spanned! {fn_span=>
        #p::SourceLocation { file: ::core::file!(), line: ::core::line!() }
    };
    let struct_doc =
        format!("The `{tool_name}` tool (generated by `#[tool]` from [`{fn_ident}`]).");

    quote! {
        #func

        #args_struct_def

        #[doc = #struct_doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #tool_struct;

        impl #p::ToolDefinition for #tool_struct {
            fn name(&self) -> &str {
                #tool_name
            }
            fn label(&self) -> &str {
                #label
            }
            fn description(&self) -> &str {
                #description
            }
            fn prompt_snippet(&self) -> #p::Option<&str> {
                #snippet
            }
            fn prompt_guidelines(&self) -> #p::Vec<#p::String> {
                #p::Vec::from([#(#p::String::from(#guidelines)),*])
            }
            fn parameters(&self) -> &#p::serde_json::Value {
                static SCHEMA: #p::OnceLock<#p::serde_json::Value> = #p::OnceLock::new();
                SCHEMA.get_or_init(#p::canonical_schema::<#args_ty>)
            }
            fn execution_mode(&self) -> #p::ExecutionMode {
                #mode
            }
            #prepare
            fn execute(
                &self,
                __pi_args: #p::serde_json::Value,
                __pi_ctx: #p::ToolContext,
            ) -> #p::BoxFuture<'_, #p::Result<#p::ToolResult, #p::ToolError>> {
                #p::Box::pin(async move {
                    #[allow(unused_imports)]
                    use #p::{DisplayToolError as _, KeepToolError as _};
                    #bind_args
                    #bind_config
                    match #call.await {
                        #p::Result::Ok(v) => #ok,
                        #p::Result::Err(e) => #p::Result::Err((&#p::ErrorWrap(e)).to_tool_error()),
                    }
                })
            }
            #config
            #read_only
            #destructive
            #accept_unknown
            fn source_location(&self) -> #p::Option<#p::SourceLocation> {
                #p::Option::Some(#location)
            }
            #renderer
        }

        #p::inventory::submit! {
            #p::ToolRegistration {
                make: #p::make_tool::<#tool_struct>,
                location: #location,
            }
        }
    }
}
