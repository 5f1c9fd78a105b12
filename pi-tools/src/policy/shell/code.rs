//! The places besides `sh -c` and `eval` where the shell runs a string as code or expands
//! one again: a trap's string, `PROMPT_COMMAND` and the prompts, `BASH_ENV` and `ENV` for a
//! child shell, an exported function, an alias, `mapfile -C`, the words inside `${…}`, and
//! arithmetic, whose array subscripts (`a[$(…)]`) are expanded even when quoted, wherever a
//! name or a number is evaluated (`printf -v`, `read`, `declare`, `let`, `[[ -v ]]`, …).

use brush_parser::word::{Parameter, ParameterExpr, ParameterTransformOp};

use super::Reader;

impl Reader<'_> {
    /// Code run later, at another place than where the text names it (a trap, a prompt, a
    /// function body): read now, its writes counted as made from an unknown directory if the
    /// line moves.
    pub(super) fn deferred(&mut self, read: impl FnOnce(&mut Self)) {
        self.deferred += 1;
        self.isolated(read);
        self.deferred -= 1;
    }

    /// `trap [-lp] [ARG] SIGNAL…`: with two operands or more, the first is code the shell
    /// runs on the signal (or at `EXIT`, `DEBUG`, `ERR`, `RETURN`).
    pub(super) fn trap(&mut self, words: &[Option<String>]) {
        let mut operands = &words[1..];
        while let Some(Some(w)) = operands.first() {
            if w == "--" {
                operands = &operands[1..];
                break;
            }
            if !w.starts_with('-') || w == "-" {
                break;
            }
            operands = &operands[1..];
        }
        if operands.len() < 2 {
            return;
        }
        match operands[0].as_deref() {
            Some("-") => {}
            Some(code) => {
                let code = code.to_owned();
                self.deferred(|r| r.script(&code));
            }
            None => self.unreadable(
                words.to_vec(),
                "`trap` is given code known only when it runs",
            ),
        }
    }

    /// A variable set to `value` (`NAME=…`, `export NAME=…`, `env NAME=…`): the variables a
    /// shell runs or expands as code, and an array element's subscript.
    pub(super) fn variable(&mut self, name: &str, value: Option<&str>) {
        let (base, index) = match name.split_once('[') {
            Some((base, index)) => (base, Some(index.trim_end_matches(']'))),
            None => (name, None),
        };
        if let Some(index) = index {
            self.evaluated(index);
        }
        match base {
            "PROMPT_COMMAND" => match value {
                Some(code) => {
                    let code = code.to_owned();
                    self.deferred(|r| r.script(&code));
                }
                None => self.unreadable(
                    vec![Some(name.to_owned())],
                    "PROMPT_COMMAND is set to code known only when it runs",
                ),
            },
            // A prompt's command substitutions run each time it is shown (`PS4` under `-x`).
            "PS0" | "PS1" | "PS2" | "PS3" | "PS4" => match value {
                Some(text) => {
                    let text = text.to_owned();
                    self.deferred(|r| {
                        r.word(&text);
                    });
                }
                None => self.unreadable(
                    vec![Some(name.to_owned())],
                    "a prompt is set to text known only when it runs, and its substitutions run",
                ),
            },
            "BASH_ENV" | "ENV" => self.unreadable(
                vec![Some(format!("{name}={}", value.unwrap_or("…")))],
                format!("a shell started with {base} set runs that file as code, which the policy cannot read"),
            ),
            // `BASH_FUNC_f%%=() { …; }` in the environment is a function a child bash defines.
            _ if base.starts_with("BASH_FUNC_") => {
                match value.and_then(|v| v.trim_start().strip_prefix("()")) {
                    Some(body) => {
                        let body = body.to_owned();
                        self.deferred(|r| r.script(&body));
                    }
                    None => self.unreadable(
                        vec![Some(name.to_owned())],
                        "it exports a function whose body the policy cannot read",
                    ),
                }
            }
            // A value naming an array element (`x='a[$(…)]'`) runs its subscript's
            // substitutions when the shell evaluates it as arithmetic or a name.
            _ => {
                if let Some(v) = value.filter(|v| v.contains('[')) {
                    self.evaluated(v);
                }
            }
        }
    }

    /// Text the shell expands again when it evaluates it as arithmetic or as a variable name:
    /// the substitutions inside (quoted or not) are commands.
    pub(super) fn evaluated(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') || text.contains("${") {
            self.word(text);
        }
    }

    /// The builtins that take code, variable names or arithmetic among their words.
    pub(super) fn builtin_code(&mut self, name: &str, words: &[Option<String>]) {
        let rest = &words[1..];
        match name {
            "trap" => self.trap(words),
            "alias" => {
                for word in rest.iter().flatten() {
                    if let Some((_, value)) = word.split_once('=') {
                        let value = value.to_owned();
                        self.deferred(|r| r.script(&value));
                    }
                }
            }
            // The callback is code run every so many lines read.
            "mapfile" | "readarray" | "complete" | "compgen" => {
                self.option_code(words, "-C");
                for word in rest.iter().flatten() {
                    self.evaluated(word);
                }
            }
            "enable" if rest.iter().flatten().any(|w| w.starts_with("-f")) => self.unreadable(
                words.to_vec(),
                "it loads a builtin from a shared library, which the policy cannot read",
            ),
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for word in rest {
                    match word.as_deref() {
                        Some(w) if w.starts_with('-') || w.starts_with('+') => {}
                        Some(w) => {
                            let (name, value) = match w.split_once('=') {
                                Some((n, v)) => (n, Some(v)),
                                None => (w, None),
                            };
                            self.variable(name.trim_end_matches('+'), value);
                        }
                        None => {}
                    }
                }
            }
            // Arithmetic (`let`) and names (`unset`, `read`): subscripts are expanded even
            // inside quotes.
            "let" | "unset" => {
                for word in rest.iter().flatten() {
                    self.evaluated(word);
                }
            }
            "read" => {
                let mut at = 0;
                while let Some(word) = rest.get(at) {
                    at += 1;
                    match word.as_deref() {
                        // These take a value, which is text, but `-a NAME` is a name.
                        Some("-d" | "-i" | "-n" | "-N" | "-p" | "-t" | "-u") => at += 1,
                        Some(w) if w.starts_with('-') && w != "-a" => {}
                        Some(w) => self.evaluated(w),
                        None => {}
                    }
                }
            }
            // The word after `-v` (`printf -v NAME`, `test -v NAME`, `wait -p NAME`) is a name.
            "printf" | "test" | "[" | "wait" => {
                let option = if name == "wait" { "-p" } else { "-v" };
                for pair in rest.windows(2) {
                    if pair[0].as_deref() == Some(option) {
                        self.evaluated(pair[1].as_deref().unwrap_or_default());
                    }
                }
            }
            "getopts" => {
                if let Some(Some(name)) = rest.get(1) {
                    self.evaluated(name);
                }
            }
            _ => {}
        }
    }

    /// `-C CODE` (or `-CCODE`) of `mapfile` and `complete`: code.
    fn option_code(&mut self, words: &[Option<String>], option: &str) {
        let mut at = 1;
        while at < words.len() {
            let code = match words[at].as_deref() {
                Some(w) if w == option => {
                    at += 1;
                    words.get(at).map(|w| w.as_deref())
                }
                Some(w) if w.starts_with(option) => Some(w.get(option.len()..)),
                _ => None,
            };
            at += 1;
            match code {
                Some(Some(code)) => {
                    let code = code.to_owned();
                    self.deferred(|r| r.script(&code));
                }
                Some(None) => self.unreadable(
                    words.to_vec(),
                    "its callback is code known only when it runs",
                ),
                None => {}
            }
        }
    }

    /// `${…}`: a default, alternative, error text, pattern, replacement, offset or subscript
    /// is a word of its own, whose substitutions run (`${x:-$(git push)}`).
    pub(super) fn parameter(&mut self, expr: &ParameterExpr) {
        use ParameterExpr as P;
        let (parameter, words): (&Parameter, Vec<&str>) = match expr {
            P::Parameter { parameter, .. } | P::ParameterLength { parameter, .. } => {
                (parameter, Vec::new())
            }
            P::UseDefaultValues {
                parameter,
                default_value: text,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                default_value: text,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                error_message: text,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                alternative_value: text,
                ..
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                pattern: text,
                ..
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                pattern: text,
                ..
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                pattern: text,
                ..
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                pattern: text,
                ..
            }
            | P::UppercaseFirstChar {
                parameter,
                pattern: text,
                ..
            }
            | P::UppercasePattern {
                parameter,
                pattern: text,
                ..
            }
            | P::LowercaseFirstChar {
                parameter,
                pattern: text,
                ..
            }
            | P::LowercasePattern {
                parameter,
                pattern: text,
                ..
            } => (parameter, text.iter().map(String::as_str).collect()),
            P::ReplaceSubstring {
                parameter,
                pattern,
                replacement,
                ..
            } => {
                let mut words = vec![pattern.as_str()];
                words.extend(replacement.as_deref());
                (parameter, words)
            }
            P::Substring {
                parameter,
                offset,
                length,
                ..
            } => {
                let mut words = vec![offset.value.as_str()];
                words.extend(length.as_ref().map(|l| l.value.as_str()));
                (parameter, words)
            }
            P::Transform { parameter, op, .. } => {
                if matches!(op, ParameterTransformOp::PromptExpand) {
                    self.unreadable(
                        vec![Some(format!("{parameter}@P"))],
                        "`${…@P}` runs the substitutions the variable's value holds, which the text does not show",
                    );
                }
                (parameter, Vec::new())
            }
            P::VariableNames { .. } | P::MemberKeys { .. } => return,
        };
        if let Parameter::NamedWithIndex { index, .. } = parameter {
            self.word(index);
        }
        for word in words {
            if !word.is_empty() {
                self.word(word);
            }
        }
    }
}
