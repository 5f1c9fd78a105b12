//! Reading a shell command the way a shell would before running it: every simple command
//! inside lists, pipelines, `&&`/`||`, subshells, command and process substitutions and
//! here-documents, with wrappers (`env`, `command`, `exec`, `nohup`, `time`, …) seen through
//! and strings run as code (`sh -c`, `eval`, `xargs`, `find -exec`, traps and the
//! rest, see `code.rs`) read in turn; a redirection's file is taken from the directory the shell is
//! in there and through links the line makes (`dirs.rs`). The parser is brush-parser, the
//! parser of the brush shell; this file only walks its syntax tree.

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

mod code;
mod dirs;
mod run;

use dirs::{Dirs, Link};

/// How deep strings run as code are read inside one another before the command counts as
/// unreadable (`sh -c "sh -c '…'"`, ten levels down, is not a command anyone writes).
const MAX_DEPTH: usize = 8;

/// Shells whose `-c` argument, script file or standard input is code.
const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

/// One simple command as it would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words after wrappers are seen through; `None` for a word whose value is only known
    /// when the command runs (an expansion, a substitution, a glob).
    pub words: Vec<Option<String>>,
    /// More words follow that the text does not show (the arguments `xargs` adds).
    pub open_tail: bool,
    /// Why the command cannot be read (its name is computed, it runs a file or standard
    /// input as code, the text does not parse); `None` when it can.
    pub unreadable: Option<String>,
}

impl SimpleCommand {
    /// The words as text, with `…` for each word known only when the command runs.
    pub fn text(&self) -> String {
        let mut words: Vec<&str> = self
            .words
            .iter()
            .map(|w| w.as_deref().unwrap_or("…"))
            .collect();
        if self.open_tail {
            words.push("…");
        }
        words.join(" ")
    }
}

/// Everything a command line runs and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellReading {
    /// Every simple command, in the order the text names them.
    pub commands: Vec<SimpleCommand>,
    /// The files output redirections write (`> f`, `>> f`, `&> f`, `>| f`), from the
    /// directory the shell may be in there (`cd secrets; echo x > key` writes `secrets/key`,
    /// and `key` should the `cd` fail), the names `ln` makes, and what a link the line makes
    /// names for a write through it; `None` for a target known only when the command runs.
    pub writes: Vec<Option<String>>,
}

/// Reads `script` into the simple commands it runs and the files it writes.
pub fn read(script: &str) -> ShellReading {
    let mut reading = ShellReading::default();
    let mut reader = Reader {
        out: &mut reading,
        depth: 0,
        dirs: Dirs::default(),
        stack: Vec::new(),
        links: Vec::new(),
        deferred: 0,
        deferred_write: false,
        moved: false,
    };
    reader.script(script);
    reader.finish();
    reading
}

struct Reader<'o> {
    out: &'o mut ShellReading,
    depth: usize,
    /// Where the shell may be at this place of the text.
    dirs: Dirs,
    /// What `pushd` saved, for `popd`.
    stack: Vec<Dirs>,
    /// The names the line makes for files (`ln`, `mv`, `cp -s`).
    links: Vec<Link>,
    /// How many levels of code run later (a trap, a function body) the reader is inside.
    deferred: usize,
    /// Whether such code writes a file by a relative name.
    deferred_write: bool,
    /// Whether the line changes directory anywhere.
    moved: bool,
}

impl Reader<'_> {
    fn unreadable(&mut self, words: Vec<Option<String>>, why: impl Into<String>) {
        self.out.commands.push(SimpleCommand {
            words,
            open_tail: false,
            unreadable: Some(why.into()),
        });
    }

    /// Reads a string as code, one level deeper.
    fn script(&mut self, script: &str) {
        if self.depth > MAX_DEPTH {
            self.unreadable(
                Vec::new(),
                "strings run as code are nested too deep to read",
            );
            return;
        }
        let options = ParserOptions::default();
        let mut parser = Parser::new(script.as_bytes(), &options);
        match parser.parse_program() {
            Ok(program) => {
                self.depth += 1;
                for list in &program.complete_commands {
                    self.list(list);
                }
                self.depth -= 1;
            }
            Err(e) => self.unreadable(
                vec![Some(script.trim().to_owned())],
                format!("the shell cannot parse it ({e})"),
            ),
        }
    }

    fn list(&mut self, list: &ast::CompoundList) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) {
        let [rest @ .., last] = pipeline.seq.as_slice() else {
            return;
        };
        // Every command of a pipeline but the last runs in a subshell; the last does too
        // unless `lastpipe` is set, so a move there may or may not stay.
        for command in rest {
            self.isolated(|r| r.command(command));
        }
        if rest.is_empty() {
            self.command(last);
        } else {
            let before = self.dirs.clone();
            self.command(last);
            self.dirs = before.union(&self.dirs);
        }
    }

    fn command(&mut self, command: &ast::Command) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound);
                self.redirects(redirects.as_ref());
            }
            ast::Command::Function(function) => {
                // The body runs when the function is called, which the text may do later,
                // from wherever the shell is then; a move inside it moves the caller.
                let moved = std::mem::replace(&mut self.moved, false);
                self.deferred(|r| {
                    r.compound(&function.body.0);
                    r.redirects(function.body.1.as_ref());
                });
                if self.moved {
                    self.dirs = self.dirs.union(&Dirs::unknown());
                }
                self.moved |= moved;
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.test_expr(&test.expr);
                self.redirects(redirects.as_ref());
            }
        }
    }

    fn test_expr(&mut self, expr: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.test_expr(a);
                self.test_expr(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.test_expr(a),
            // `-v NAME` and the arithmetic comparisons evaluate their operands again.
            E::UnaryTest(predicate, w) => {
                let value = self.word(&w.value);
                if matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    self.evaluated(value.as_deref().unwrap_or_default());
                }
            }
            E::BinaryTest(predicate, a, b) => {
                use ast::BinaryPredicate as B;
                let arithmetic = matches!(
                    predicate,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                );
                for w in [a, b] {
                    let value = self.word(&w.value);
                    if arithmetic {
                        self.evaluated(value.as_deref().unwrap_or_default());
                    }
                }
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => self.arithmetic(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for expr in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&expr.value);
                }
                self.repeated(|r| r.list(&f.body.list));
            }
            C::BraceGroup(g) => self.list(&g.list),
            C::Subshell(s) => self.isolated(|r| r.list(&s.list)),
            C::ForClause(f) => {
                for value in f.values.iter().flatten() {
                    self.word(&value.value);
                }
                self.repeated(|r| r.list(&f.body.list));
            }
            C::CaseClause(c) => {
                self.word(&c.value.value);
                for item in &c.cases {
                    for pattern in &item.patterns {
                        self.word(&pattern.value);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd);
                    }
                }
            }
            C::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for other in i.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.list(condition);
                    }
                    self.list(&other.body);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => self.repeated(|r| {
                r.list(&w.0);
                r.list(&w.1.list);
            }),
            C::Coprocess(c) => self.isolated(|r| r.command(&c.body)),
        }
    }

    /// An arithmetic expression runs nothing but the substitutions it holds, which the
    /// parser leaves as text: they are read as a word's.
    fn arithmetic(&mut self, text: &str) {
        self.evaluated(text);
    }

    fn redirects(&mut self, list: Option<&ast::RedirectList>) {
        for redirect in list.iter().flat_map(|l| l.0.iter()) {
            self.redirect(redirect);
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T};
        match redirect {
            ast::IoRedirect::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let value = self.word(&w.value);
                    if matches!(kind, K::Write | K::Append | K::Clobber | K::ReadAndWrite) {
                        self.write(value);
                    }
                }
                T::ProcessSubstitution(_, sub) => self.isolated(|r| r.list(&sub.list)),
                T::Duplicate(w) => {
                    // `>&file` writes a file; `>&2` and `>&-` only duplicate descriptors.
                    let value = self.word(&w.value);
                    let is_fd = value
                        .as_deref()
                        .is_some_and(|v| v == "-" || v.chars().all(|c| c.is_ascii_digit()));
                    if matches!(kind, K::DuplicateOutput) && !is_fd {
                        self.write(value);
                    }
                }
                T::Fd(_) => {}
            },
            ast::IoRedirect::OutputAndError(w, _) => {
                let value = self.word(&w.value);
                self.write(value);
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    self.heredoc(&doc.doc.value);
                }
            }
            ast::IoRedirect::HereString(_, w) => {
                self.word(&w.value);
            }
        }
    }

    /// The substitutions of an unquoted here-document's body run when it is read.
    fn heredoc(&mut self, body: &str) {
        match word::parse_heredoc(body, &ParserOptions::default()) {
            Ok(pieces) => {
                self.pieces(&pieces);
            }
            Err(_) => self.unreadable(Vec::new(), "a here-document's body cannot be parsed"),
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) {
        use ast::CommandPrefixOrSuffixItem as Item;
        let mut words = Vec::new();
        let mut stdin_code: Option<Option<String>> = None;
        let mut items: Vec<ItemRef<'_>> = Vec::new();
        items.extend(
            simple
                .prefix
                .iter()
                .flat_map(|p| p.0.iter())
                .map(ItemRef::Borrowed),
        );
        items.extend(simple.word_or_name.iter().map(ItemRef::Word));
        items.extend(
            simple
                .suffix
                .iter()
                .flat_map(|s| s.0.iter())
                .map(ItemRef::Borrowed),
        );
        for item in items {
            match item {
                ItemRef::Word(w) => words.push(self.word(&w.value)),
                ItemRef::Borrowed(Item::Word(w)) => words.push(self.word(&w.value)),
                ItemRef::Borrowed(Item::AssignmentWord(assignment, w)) => {
                    if words.is_empty() {
                        self.assignment(assignment);
                    } else {
                        // `declare x=…`, `export x=…`: a word of the command, read as an
                        // assignment when run; one whose value is unknown is judged here
                        // by its name (`export PROMPT_COMMAND="$X"`).
                        let value = self.word(&w.value);
                        if value.is_none() {
                            self.variable(&assignment.name.to_string(), None);
                        }
                        words.push(value);
                    }
                }
                ItemRef::Borrowed(Item::IoRedirect(redirect)) => {
                    if let ast::IoRedirect::HereDocument(_, doc) = redirect {
                        stdin_code = Some((!doc.requires_expansion).then(|| doc.doc.value.clone()));
                    } else if let ast::IoRedirect::HereString(_, w) = redirect {
                        stdin_code = Some(self.word(&w.value));
                        continue;
                    } else if matches!(
                        redirect,
                        ast::IoRedirect::File(Some(0) | None, ast::IoFileRedirectKind::Read, _)
                    ) {
                        stdin_code = Some(None);
                    }
                    self.redirect(redirect);
                }
                ItemRef::Borrowed(Item::ProcessSubstitution(_, sub)) => {
                    self.isolated(|r| r.list(&sub.list));
                    words.push(None);
                }
            }
        }
        if !words.is_empty() {
            self.run(words, stdin_code.unwrap_or(None), false);
        }
    }

    fn assignment(&mut self, assignment: &ast::Assignment) {
        let name = assignment.name.to_string();
        match &assignment.value {
            ast::AssignmentValue::Scalar(w) => {
                let value = self.word(&w.value);
                self.variable(&name, value.as_deref());
            }
            ast::AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        self.word(&key.value);
                    }
                    let value = self.word(&value.value);
                    self.variable(&name, value.as_deref());
                }
            }
        }
    }

    /// A word's value where the text fixes it, `None` where it is known only when the
    /// command runs; substitutions inside are read as commands of their own.
    fn word(&mut self, raw: &str) -> Option<String> {
        if is_plain(raw) {
            return Some(raw.to_owned());
        }
        match word::parse(raw, &ParserOptions::default()) {
            Ok(pieces) => self.pieces(&pieces),
            Err(_) => {
                self.unreadable(vec![Some(raw.to_owned())], "a word of it cannot be parsed");
                None
            }
        }
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource]) -> Option<String> {
        let mut value = Some(String::new());
        for piece in pieces {
            let part = match &piece.piece {
                WordPiece::Text(text) => {
                    // An unquoted glob or brace expansion becomes other words on disk.
                    let expands = text.contains(['*', '?', '['])
                        || (text.contains('{') && (text.contains(',') || text.contains("..")));
                    (!expands).then(|| text.clone())
                }
                WordPiece::SingleQuotedText(text) => Some(text.clone()),
                // `$'\x67'` is decoded when the command runs; plain text only is taken as is.
                WordPiece::AnsiCQuotedText(text) => (!text.contains('\\')).then(|| text.clone()),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(inner),
                WordPiece::EscapeSequence(escaped) => {
                    Some(escaped.strip_prefix('\\').unwrap_or(escaped).to_owned())
                }
                WordPiece::CommandSubstitution(code) => {
                    self.isolated(|r| r.script(code));
                    None
                }
                WordPiece::BackquotedCommandSubstitution(code) => {
                    self.isolated(|r| r.script(&unescape_backquoted(code)));
                    None
                }
                WordPiece::ParameterExpansion(expr) => {
                    self.parameter(expr);
                    None
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value);
                    None
                }
                WordPiece::TildeExpansion(_) => None,
            };
            value = match (value, part) {
                (Some(mut v), Some(p)) => {
                    v.push_str(&p);
                    Some(v)
                }
                _ => None,
            };
        }
        value
    }
}

/// A simple command's items in order, with the command word borrowed from another field.
enum ItemRef<'a> {
    Borrowed(&'a ast::CommandPrefixOrSuffixItem),
    Word(&'a ast::Word),
}

/// Whether a word holds nothing a shell expands, unquotes or unescapes (letters, digits and
/// `_-./,:=+@%` only), so its value is its text. Most words are such, and the word parser
/// (which copies the word, locks a process-wide cache and clones its answer) is then not
/// needed; anything else goes to it.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./,:=+@%".contains(&b))
}

/// `/bin/rm` runs `rm`.
pub(super) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the character itself.
fn unescape_backquoted(code: &str) -> String {
    let code = code
        .strip_prefix('`')
        .and_then(|c| c.strip_suffix('`'))
        .unwrap_or(code);
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '\\')) {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use brush_parser::ParserOptions;
    use brush_parser::word::{self, WordPiece};

    use super::is_plain;

    /// A word taken as its own text is one the word parser reads as one piece of plain text
    /// equal to the word; anything a shell could expand or unquote goes to the parser.
    #[test]
    fn plain_words_are_what_the_parser_reads_as_plain_text() {
        let plain = [
            "git",
            "--quiet",
            "-n",
            "5",
            "log.txt",
            "a=b",
            "src/lib.rs",
            "user@host:path",
            "+x",
            "50%",
            "a,b",
            "../x",
            "A_Z",
        ];
        for raw in plain {
            assert!(is_plain(raw), "{raw:?}");
            let pieces = word::parse(raw, &ParserOptions::default()).expect("parses");
            assert!(
                matches!(pieces.as_slice(), [p] if matches!(&p.piece, WordPiece::Text(t) if t == raw)),
                "{raw:?}: {pieces:?}"
            );
        }
        let not_plain = [
            "~", "~/x", "a*", "a?", "[ab]", "{a,b}", "a{1..3}", "$x", "'x'", "\"x\"", "a\\b", "!x",
            "@(a)", "é", "", "`x`", "$(x)", "a b", "a;b",
        ];
        for raw in not_plain {
            assert!(!is_plain(raw), "{raw:?}");
        }
    }
}
