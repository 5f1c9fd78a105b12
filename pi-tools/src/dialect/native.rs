//! The tools each provider family's models were trained on, and the one place their
//! versions are pinned. With `[tools] shapes = "native"` ([`Shapes::Native`]), or native
//! shapes for some families only ([`FamilyShapes`]), a toolbox offers these to those
//! families in place of the pi-tools schemas of the built-ins they stand for; the reply
//! readers map their calls onto the built-ins either way, and the results go back in each
//! shape's own form.
//!
//! | family (dialect) | native tool sent | stands for | its calls run as |
//! |---|---|---|---|
//! | Anthropic (`anthropic`) | `{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}` | edit, write | `str_replace_based_edit_tool`: view → read or ls, create → write, str_replace → edit, insert → an insertion at a line |
//! | Anthropic (`anthropic`) | `{"type": "bash_20250124", "name": "bash"}` | bash | bash (`restart` answered: every command runs in a fresh shell) |
//! | OpenAI Responses (`openai-responses`) | `{"type": "apply_patch"}` | edit, write | `apply_patch` (`apply_patch_call` items, one V4A operation each) |
//! | OpenAI Responses (`openai-responses`) | `{"type": "shell", "environment": {"type": "local"}}` | bash | bash (`shell_call` items; several commands run one after another) |
//! | OpenAI Chat, Gemini, MCP | none | | the pi-tools schemas |
//!
//! To move to a newer version of a tool, change its constant here (and the tests that
//! check the requests against the providers' SDK types, `tests/python/native_shapes.py`).

use serde_json::{Value, json};

use super::Dialect;

/// Anthropic's text editor tool type.
pub const ANTHROPIC_TEXT_EDITOR: &str = "text_editor_20250728";
/// The name Anthropic's text editor (of [`ANTHROPIC_TEXT_EDITOR`]) must have.
pub const ANTHROPIC_TEXT_EDITOR_NAME: &str = "str_replace_based_edit_tool";
/// Anthropic's bash tool type (named `bash`).
pub const ANTHROPIC_BASH: &str = "bash_20250124";
/// The Responses API's patch tool type.
pub const RESPONSES_APPLY_PATCH: &str = "apply_patch";
/// The Responses API's shell tool type.
pub const RESPONSES_SHELL: &str = "shell";

/// Which shapes a toolbox offers its built-ins in (`[tools] shapes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shapes {
    /// The pi-tools schemas for every family (the default).
    #[default]
    PiTools,
    /// Each family's trained tools where it has them ([module docs](self)), the pi-tools
    /// schemas elsewhere.
    Native,
}

impl Shapes {
    /// The name as `[tools] shapes` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Shapes::PiTools => "pi-tools",
            Shapes::Native => "native",
        }
    }
}

/// Which shapes each family with native tools gets (`[tools] shapes`): one word for every
/// family (`shapes = "native"`), or a table naming families by their dialect
/// (`shapes = { anthropic = "native", openai-responses = "pi-tools" }`; a family left out
/// gets the pi-tools shapes). The families without native tools always get the pi-tools
/// shapes.
///
/// ```
/// use pi_tools::dialect::Dialect;
/// use pi_tools::dialect::native::{FamilyShapes, Shapes};
/// let shapes = FamilyShapes { anthropic: Shapes::Native, ..FamilyShapes::default() };
/// assert_eq!(shapes.of(Dialect::Anthropic), Shapes::Native);
/// assert_eq!(shapes.of(Dialect::OpenAiResponses), Shapes::PiTools);
/// assert_eq!(FamilyShapes::all(Shapes::Native).of(Dialect::Gemini), Shapes::PiTools);
/// assert!(shapes.any_native());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FamilyShapes {
    /// Anthropic's (the `anthropic` dialect).
    pub anthropic: Shapes,
    /// OpenAI Responses' (the `openai-responses` dialect).
    pub responses: Shapes,
}

/// The dialects `[tools] shapes` may name in its table: those of the families with native
/// tools.
pub const SHAPE_FAMILIES: [Dialect; 2] = [Dialect::Anthropic, Dialect::OpenAiResponses];

impl FamilyShapes {
    /// `shapes` for every family.
    pub const fn all(shapes: Shapes) -> Self {
        FamilyShapes {
            anthropic: shapes,
            responses: shapes,
        }
    }

    /// The shapes `dialect`'s family gets.
    pub fn of(self, dialect: Dialect) -> Shapes {
        match dialect {
            Dialect::Anthropic => self.anthropic,
            Dialect::OpenAiResponses => self.responses,
            _ => Shapes::PiTools,
        }
    }

    /// Sets the shapes of `dialect`'s family; `false` for a dialect without native tools.
    pub fn set(&mut self, dialect: Dialect, shapes: Shapes) -> bool {
        match dialect {
            Dialect::Anthropic => self.anthropic = shapes,
            Dialect::OpenAiResponses => self.responses = shapes,
            _ => return false,
        }
        true
    }

    /// Whether some family gets its native tools (the tools serving them are then active).
    pub fn any_native(self) -> bool {
        self.anthropic == Shapes::Native || self.responses == Shapes::Native
    }
}

/// The built-in tools that serve native shapes: off in the pi-tools shapes, and turned on
/// beside edit by [`Shapes::Native`].
pub const NATIVE_SERVING_TOOLS: [&str; 2] = ["apply_patch", ANTHROPIC_TEXT_EDITOR_NAME];

/// One tool as `dialect` gets it with native shapes, given its pi-tools name:
/// [`Native::Replace`] with the family's own tool, [`Native::Drop`] for a built-in another
/// native tool stands for, [`Native::Keep`] for a tool that keeps its pi-tools shape.
///
/// ```
/// use pi_tools::dialect::Dialect;
/// use pi_tools::dialect::native::{Native, native_shape};
/// use serde_json::json;
/// assert_eq!(native_shape(Dialect::OpenAiResponses, "apply_patch"), Native::Replace(json!({"type": "apply_patch"})));
/// assert_eq!(native_shape(Dialect::Anthropic, "edit"), Native::Drop);
/// assert_eq!(native_shape(Dialect::Gemini, "edit"), Native::Keep);
/// ```
pub fn native_shape(dialect: Dialect, tool: &str) -> Native {
    match (dialect, tool) {
        (Dialect::Anthropic, ANTHROPIC_TEXT_EDITOR_NAME) => Native::Replace(json!({
            "type": ANTHROPIC_TEXT_EDITOR,
            "name": ANTHROPIC_TEXT_EDITOR_NAME,
        })),
        (Dialect::Anthropic, "bash") => Native::Replace(json!({
            "type": ANTHROPIC_BASH,
            "name": "bash",
        })),
        (Dialect::Anthropic, "edit" | "write" | "apply_patch") => Native::Drop,
        (Dialect::OpenAiResponses, "apply_patch") => {
            Native::Replace(json!({"type": RESPONSES_APPLY_PATCH}))
        }
        (Dialect::OpenAiResponses, "bash") => Native::Replace(json!({
            "type": RESPONSES_SHELL,
            "environment": {"type": "local"},
        })),
        (Dialect::OpenAiResponses, "edit" | "write" | ANTHROPIC_TEXT_EDITOR_NAME) => Native::Drop,
        (_, name) if NATIVE_SERVING_TOOLS.contains(&name) => Native::Drop,
        _ => Native::Keep,
    }
}

/// What [`native_shape`] makes of one tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Native {
    /// The family's own tool, as the request sends it.
    Replace(Value),
    /// Left out: a native tool of the family stands for it (or it serves only a native
    /// shape the family does not have).
    Drop,
    /// Sent in its pi-tools shape.
    Keep,
}

/// Whether `dialect` has native tools at all (Anthropic and Responses).
pub fn has_native_tools(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::Anthropic | Dialect::OpenAiResponses)
}
