//! Styled text: what `render_call` / `render_result` return, printable as ANSI or plain.

/// A colour for a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// Red (errors, removed lines).
    Red,
    /// Green (success, added lines).
    Green,
    /// Yellow (warnings, notices).
    Yellow,
    /// Blue.
    Blue,
    /// Magenta.
    Magenta,
    /// Cyan (names, paths).
    Cyan,
    /// Grey (context, secondary text).
    Gray,
}

/// How a span looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Style {
    /// Foreground colour.
    pub fg: Option<Color>,
    /// Bold.
    pub bold: bool,
    /// Dimmed.
    pub dim: bool,
}

impl Style {
    /// No styling.
    pub const PLAIN: Style = Style {
        fg: None,
        bold: false,
        dim: false,
    };

    /// A coloured style.
    pub const fn fg(color: Color) -> Style {
        Style {
            fg: Some(color),
            bold: false,
            dim: false,
        }
    }

    /// This style, bold.
    pub const fn bold(mut self) -> Style {
        self.bold = true;
        self
    }

    /// This style, dimmed.
    pub const fn dim(mut self) -> Style {
        self.dim = true;
        self
    }
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text (may contain newlines).
    pub text: String,
    /// Its style.
    pub style: Style,
}

/// A sequence of styled spans.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Styled {
    /// The spans, in order.
    pub spans: Vec<Span>,
}

impl Styled {
    /// Empty text.
    pub fn new() -> Self {
        Styled::default()
    }

    /// Unstyled text.
    pub fn plain(text: impl Into<String>) -> Self {
        Styled::new().push(text, Style::PLAIN)
    }

    /// Appends a span.
    pub fn push(mut self, text: impl Into<String>, style: Style) -> Self {
        self.add(text, style);
        self
    }

    /// Appends a span in place.
    pub fn add(&mut self, text: impl Into<String>, style: Style) {
        let text = text.into();
        if !text.is_empty() {
            self.spans.push(Span { text, style });
        }
    }

    /// Appends another styled text.
    pub fn append(&mut self, other: Styled) {
        self.spans.extend(other.spans);
    }

    /// The text without styling.
    pub fn to_plain(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }

    /// The text with ANSI escape codes (each line styled on its own, so a pager or a
    /// line-cutting terminal never bleeds colour).
    pub fn to_ansi(&self) -> String {
        let mut out = String::new();
        for span in &self.spans {
            let codes = ansi_codes(span.style);
            if codes.is_empty() {
                out.push_str(&span.text);
                continue;
            }
            for (i, line) in span.text.split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                if !line.is_empty() {
                    out.push_str(&format!("\x1b[{codes}m{line}\x1b[0m"));
                }
            }
        }
        out
    }
}

fn ansi_codes(style: Style) -> String {
    let mut codes = Vec::new();
    if style.bold {
        codes.push("1");
    }
    if style.dim {
        codes.push("2");
    }
    if let Some(color) = style.fg {
        codes.push(match color {
            Color::Red => "31",
            Color::Green => "32",
            Color::Yellow => "33",
            Color::Blue => "34",
            Color::Magenta => "35",
            Color::Cyan => "36",
            Color::Gray => "90",
        });
    }
    codes.join(";")
}
