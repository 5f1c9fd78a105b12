#![doc = include_str!("docs/crate.md")]

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
#[cfg(test)]
mod readme;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

#[doc = include_str!("docs/tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}
