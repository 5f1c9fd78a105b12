//! How many columns a tab of the file stands for, when something settles it: a vim or
//! emacs modeline in the file, the `.editorconfig` files that apply to it, or the way its
//! lines mix tabs and spaces. A single line converted between tabs and spaces must stay at
//! its depth, and its depth depends on this width: guessing it moved lines (issue of a tab
//! taken as 4 columns in a file whose tabs are 2).

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

/// Tab widths tried when nothing settles the width, the most common first.
pub(super) const WIDTHS: [usize; 3] = [4, 2, 8];

/// Widths above this are not taken from a modeline or an .editorconfig (nonsense values).
const MAX_WIDTH: usize = 16;

/// How many lines at each end of the file a modeline is looked for in (vim's default).
const MODELINE_LINES: usize = 5;

/// The tab width a modeline sets: vim's `ts=`/`tabstop=` after `vim:`, `vi:` or `ex:`, or
/// emacs's `tab-width:`, in the first or last [`MODELINE_LINES`] lines.
pub(crate) fn modeline(text: &str) -> Option<usize> {
    let head = text.split('\n').take(MODELINE_LINES);
    let tail = text.rsplit('\n').take(MODELINE_LINES);
    head.chain(tail)
        .filter(|line| line.len() < 1000)
        .find_map(|line| vim_width(line).or_else(|| emacs_width(line)))
}

fn vim_width(line: &str) -> Option<usize> {
    let at = ["vim:", "vi:", "ex:"]
        .iter()
        .filter_map(|tag| line.find(tag).map(|i| i + tag.len()))
        .min()?;
    line[at..]
        .split(|c: char| c.is_whitespace() || c == ':')
        .find_map(|option| {
            let value = option
                .strip_prefix("ts=")
                .or_else(|| option.strip_prefix("tabstop="))?;
            width(value)
        })
}

fn emacs_width(line: &str) -> Option<usize> {
    let at = line.find("tab-width:")? + "tab-width:".len();
    let value = line[at..].trim_start();
    let digits = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    width(&value[..digits])
}

fn width(value: &str) -> Option<usize> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|&w| (1..=MAX_WIDTH).contains(&w))
}

/// What the indentation of a file's lines tells about its tab width: in a file that indents
/// some lines with spaces only and others with tabs followed by spaces (the style of GNU
/// code and of editors that fill with tabs), spaces make up less than one tab, so the tab is
/// wider than any run of them.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Mixing {
    /// Whether some line is indented with spaces only.
    spaces_only: bool,
    /// Whether some line is indented with tabs and then spaces.
    tabs_then_spaces: bool,
    /// The longest run of spaces in an indentation.
    longest_run: usize,
}

impl Mixing {
    /// Notes one line's indentation.
    pub fn add(&mut self, indent: &str) {
        let spaces = indent.trim_start_matches('\t');
        if spaces.contains('\t') || spaces.is_empty() {
            return;
        }
        if spaces.len() == indent.len() {
            self.spaces_only = true;
        } else {
            self.tabs_then_spaces = true;
        }
        self.longest_run = self.longest_run.max(spaces.len());
    }

    /// The one width of [`WIDTHS`] the mix allows, when it allows exactly one.
    pub fn width(&self) -> Option<usize> {
        if !(self.spaces_only && self.tabs_then_spaces) {
            return None;
        }
        let mut allowed = WIDTHS.iter().filter(|&&w| w > self.longest_run);
        match (allowed.next(), allowed.next()) {
            (Some(&w), None) => Some(w),
            _ => None,
        }
    }
}

/// The `.editorconfig` files that may apply to `path`, nearest first: one per directory from
/// the file's own up to the root, as far as the first that says `root = true` reaches.
pub(crate) fn editorconfig_candidates(path: &Path) -> Vec<PathBuf> {
    path.ancestors()
        .skip(1)
        .take(64)
        .map(|dir| dir.join(".editorconfig"))
        .collect()
}

/// One `.editorconfig` file: its directory and text.
pub(crate) struct EditorConfig {
    pub dir: PathBuf,
    pub text: String,
}

impl EditorConfig {
    /// Whether it says `root = true` before its first section (no file above it counts).
    pub fn is_root(&self) -> bool {
        self.text
            .lines()
            .map(str::trim)
            .take_while(|line| !line.starts_with('['))
            .filter_map(property)
            .any(|(key, value)| key == "root" && value.eq_ignore_ascii_case("true"))
    }
}

/// `key = value` with the key lowercased, or `None` for a comment, a section or nonsense.
fn property(line: &str) -> Option<(String, &str)> {
    if line.starts_with(['#', ';', '[']) {
        return None;
    }
    let (key, value) = line.split_once(['=', ':'])?;
    Some((key.trim().to_ascii_lowercase(), value.trim()))
}

/// The tab width the `.editorconfig` files (nearest first) set for `path`: `tab_width`, else
/// a numeric `indent_size` (which it defaults to), from the last section that matches, the
/// nearer file winning.
pub(crate) fn editorconfig_width(configs: &[EditorConfig], path: &Path) -> Option<usize> {
    let (mut tab_width, mut indent_size): (Option<String>, Option<String>) = (None, None);
    // Farthest first, so that nearer files and later sections override.
    for config in configs.iter().rev() {
        let Ok(relative) = path.strip_prefix(&config.dir) else {
            continue;
        };
        let mut applies = false;
        for line in config.text.lines().map(str::trim) {
            if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                applies = section_matches(section, relative);
                continue;
            }
            let Some((key, value)) = property(line).filter(|_| applies) else {
                continue;
            };
            match key.as_str() {
                "tab_width" => tab_width = Some(value.to_ascii_lowercase()),
                "indent_size" => indent_size = Some(value.to_ascii_lowercase()),
                _ => {}
            }
        }
    }
    tab_width
        .as_deref()
        .and_then(width)
        .or_else(|| indent_size.as_deref().and_then(width))
}

/// Whether an .editorconfig section's glob names `relative` (the file's path from the
/// config's directory): a glob without `/` matches the file name in any directory below.
fn section_matches(glob: &str, relative: &Path) -> bool {
    let pattern = match glob.strip_prefix('/') {
        Some(anchored) => anchored.to_string(),
        None if glob.contains('/') => glob.to_string(),
        None => format!("**/{glob}"),
    };
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .is_ok_and(|glob| glob.compile_matcher().is_match(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modelines() {
        assert_eq!(modeline("a\n// vim: set ts=2 sw=2:\n"), Some(2));
        assert_eq!(modeline("# vi:tabstop=8:sw=8\nx"), Some(8));
        assert_eq!(modeline("/* -*- mode: c; tab-width: 3 -*- */\n"), Some(3));
        assert_eq!(
            modeline(";; Local Variables:\n;; tab-width: 4\n;; End:\n"),
            Some(4)
        );
        assert_eq!(modeline("let ts=2;\n"), None);
        let far = format!("vim: ts=2\n{}", "x\n".repeat(20));
        assert_eq!(modeline(&far), Some(2));
        let middle = format!("{}vim: ts=2\n{}", "x\n".repeat(20), "x\n".repeat(20));
        assert_eq!(modeline(&middle), None);
    }

    #[test]
    fn mixing() {
        let mut mix = Mixing::default();
        for indent in ["  ", "      ", "\t", "\t  "] {
            mix.add(indent);
        }
        assert_eq!(mix.width(), Some(8));
        let mut mix = Mixing::default();
        for indent in ["\t", "\t\t", "\t  "] {
            mix.add(indent);
        }
        assert_eq!(mix.width(), None);
    }

    #[test]
    fn editorconfig_sections() {
        let config = |dir: &str, text: &str| EditorConfig {
            dir: PathBuf::from(dir),
            text: text.to_string(),
        };
        let configs = [
            config("/p/src", "[*.rs]\ntab_width = 2\n"),
            config(
                "/p",
                "root = true\n[*]\nindent_size = 8\n[*.py]\nindent_size = 4\n",
            ),
        ];
        assert!(configs[1].is_root() && !configs[0].is_root());
        assert_eq!(
            editorconfig_width(&configs, Path::new("/p/src/a.rs")),
            Some(2)
        );
        assert_eq!(
            editorconfig_width(&configs, Path::new("/p/src/a.py")),
            Some(4)
        );
        assert_eq!(editorconfig_width(&configs, Path::new("/p/a.c")), Some(8));
        let anchored = [config("/p", "[src/*.{c,h}]\ntab_width = 3\n")];
        assert_eq!(
            editorconfig_width(&anchored, Path::new("/p/src/a.h")),
            Some(3)
        );
        assert_eq!(
            editorconfig_width(&anchored, Path::new("/p/lib/src/a.h")),
            None
        );
    }
}
