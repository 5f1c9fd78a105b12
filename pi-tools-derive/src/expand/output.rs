//! What a tool gives back: the output schema in its spec, and the conversion of the fn's
//! `Ok` value into a result (a typed value becomes the structured result plus its text).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Gen;
use crate::ast::{OkKind, Return};

impl Gen<'_> {
    /// `output_schema`: the typed return's schema (checked `JsonSchema` at the return
    /// type), the `output = Type` one, or none.
    pub(super) fn output_schema_field(&self) -> TokenStream {
        let p = &self.private;
        match (&self.tool.ret, &self.attrs.output) {
            (Return::Result(OkKind::Typed(ty)), _) => {
                let schema = quote_spanned!(ty.span()=> #p::return_schema::<#ty>());
                quote!(output_schema: #p::Option::Some(#schema),)
            }
            (_, Some(ty)) => {
                let schema = quote_spanned!(ty.span()=> #p::declared_output_schema::<#ty>());
                quote!(output_schema: #p::Option::Some(#schema),)
            }
            _ => quote!(output_schema: #p::Option::None,),
        }
    }

    /// The expression turning the fn's `Ok` value `v` into a `Result<ToolResult, ToolError>`:
    /// a typed value (checked `Serialize` at the return type) with its text (`text = f`, or
    /// compact JSON), anything else through `IntoToolResult`.
    pub(super) fn ok_conversion(&self) -> TokenStream {
        let p = &self.private;
        match &self.tool.ret {
            Return::Result(OkKind::Typed(ty)) => {
                let text = match &self.attrs.text {
                    Some(text) => {
                        let path = &text.0;
                        quote!(#p::Option::Some(#path(&v)))
                    }
                    None => quote!(#p::Option::None),
                };
                quote_spanned!(ty.span()=> #p::typed_result::<#ty>(&v, #text))
            }
            _ => quote!(#p::IntoToolResult::into_tool_result(v)),
        }
    }
}
