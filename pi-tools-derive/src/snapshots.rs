//! Snapshots of the expansion of representative tools (formatted with prettyplease).

use quote::quote;

use crate::expand::expand;

fn pretty(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let tokens = expand(args, item);
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(e) => panic!("the expansion does not parse ({e}): {tokens}"),
    }
}

#[test]
fn plain_parameters_with_context_and_metadata() {
    insta::assert_snapshot!(pretty(
        quote!(
            snippet = "Read file contents",
            guidelines = ["Use read to examine files."],
            read_only
        ),
        quote! {
            /// Read the contents of a file.
            ///
            /// The second paragraph, part of the description
            /// (its lines joined).
            pub async fn read(
                ctx: &ToolContext,
                /// Path to the file to read
                path: String,
                /// Line to start from (1-indexed)
                #[default = 1]
                offset: u64,
                /// The text encoding
                #[default = "utf-8"]
                encoding: String,
                /// Stop after this many lines
                limit: Option<u64>,
            ) -> Result<ToolOutput<ReadDetails>, ToolError> {
                todo!()
            }
        }
    ));
}

#[test]
fn args_struct_with_prepare_and_sequential_mode() {
    insta::assert_snapshot!(pretty(
        quote!(
            name = "edit",
            mode = sequential,
            prepare = upgrade_edit,
            destructive
        ),
        quote! {
            /// Replace text in a file.
            async fn edit_file(#[args] args: EditArgs, #[ctx] ctx: ToolContext) -> Result<String, EditError> {
                todo!()
            }
        }
    ));
}

#[test]
fn config_renderer_and_json_output() {
    insta::assert_snapshot!(pretty(
        quote!(
            name = "run-shell",
            label = "Shell",
            role = shell,
            config = ShellConfig,
            renderer = ShellRenderer
        ),
        quote! {
            /// Run a shell command.
            async fn shell(
                #[config] config: &ShellConfig,
                #[serde(rename = "cmd")]
                command: String,
            ) -> Result<Vec<String>, std::io::Error> {
                todo!()
            }
        }
    ));
}

#[test]
fn on_error_only_the_fn_the_errors_and_a_placeholder_are_emitted() {
    insta::assert_snapshot!(pretty(
        quote!(mode = later, colour = "red"),
        quote! {
            /// Echo.
            async fn echo(text: String) -> Result<String, ToolError> {
                Ok(text)
            }
        }
    ));
}

#[test]
fn a_renamed_crate_is_the_only_road_into_pi_tools() {
    let expansion = pretty(
        quote!(crate = "renamed", role = explore),
        quote! {
            /// Search the code.
            async fn search(#[default = 10] limit: u32) -> Result<String, String> {
                todo!()
            }
        },
    );
    assert!(!expansion.contains("pi_tools"), "{expansion}");
    insta::assert_snapshot!(expansion);
}
