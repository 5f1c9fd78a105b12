//! Loading: TOML text (a file, or the embedded default) into a validated [`Config`]. Unknown
//! tool names get a did-you-mean, unknown keys and wrong types are errors, and every problem
//! is collected (not just the first) with its position.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::line_column;
use super::{
    Config, ConfigError, ConfigProblem, DEFAULT_ORIGIN, DEFAULT_TIMEOUT_SECS, DEFAULT_TOML,
    EnvSettings, SandboxSettings, ToolSettings,
};
use crate::core::ExecutionMode;
use crate::declared::spec as declared;
use crate::tool::{ToolDefinition, ToolOrigin, names};

mod env;
mod paths;
mod policy;
mod sandbox;
mod servers;
mod values;

use crate::dialect::native::FamilyShapes;
use crate::toml_read::Problems;
pub(super) use crate::toml_read::{integer, suggest, to_json};

const TOOLS_KEYS: [&str; 5] = [
    "active",
    "execution",
    "max_concurrency",
    "timeout_secs",
    "shapes",
];
const SECTIONS: [&str; 8] = [
    "tools", "tool", "paths", "prompt", "sandbox", "env", "mcp", "policy",
];

impl Config {
    /// Loads `path`, or the embedded default when `path` is `None`, validating it against
    /// the registered tools.
    pub fn load(
        path: Option<&Path>,
        registered: &[Arc<dyn ToolDefinition>],
    ) -> Result<Config, ConfigError> {
        let Some(path) = path else {
            return Config::embedded(registered);
        };
        let origin = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, &origin, registered),
            Err(e) => Err(ConfigError {
                problems: vec![ConfigProblem {
                    origin,
                    line: 0,
                    column: 0,
                    message: format!(
                        "cannot read the configuration file ({e}); check the path given with --config"
                    ),
                }],
            }),
        }
    }

    /// The embedded default. Default tools that are not registered in this binary are
    /// left out rather than reported, so a binary without some built-ins still starts.
    ///
    /// A program's own tools (every registered tool whose [`origin`](crate::tool::ToolSpec::origin) is
    /// [`ToolOrigin::Own`]) are active too, after the default's, in
    /// registration order: a crate that declares tools and calls `cli::main` serves them with
    /// no configuration file. A file of one's own lists exactly what it wants.
    pub fn embedded(registered: &[Arc<dyn ToolDefinition>]) -> Result<Config, ConfigError> {
        let mut config = Loader::new(DEFAULT_TOML, DEFAULT_ORIGIN, registered, true).run()?;
        for tool in registered {
            let name = &tool.spec().name;
            let own = tool.spec().origin == ToolOrigin::Own;
            if own && !config.active.iter().any(|a| a == name) {
                config.active.push(name.to_owned());
            }
        }
        Ok(config)
    }

    /// Parses and validates configuration text; `origin` names it in errors.
    pub fn parse(
        text: &str,
        origin: &str,
        registered: &[Arc<dyn ToolDefinition>],
    ) -> Result<Config, ConfigError> {
        Loader::new(text, origin, registered, false).run()
    }
}

pub(super) struct Loader<'a> {
    text: &'a str,
    origin: &'a str,
    registered: &'a [Arc<dyn ToolDefinition>],
    /// Drop unregistered default tools instead of reporting them.
    lenient: bool,
    problems: Problems,
    /// `active` entries that name mounted tools, checked once `[mcp.servers]` is read.
    mounted_active: Vec<(String, Range<usize>)>,
    /// The names of the tools the file declares, known before `active` is read.
    declared: Vec<String>,
}

impl<'a> Loader<'a> {
    fn new(
        text: &'a str,
        origin: &'a str,
        registered: &'a [Arc<dyn ToolDefinition>],
        lenient: bool,
    ) -> Self {
        Loader {
            text,
            origin,
            registered,
            lenient,
            problems: Problems::default(),
            mounted_active: Vec::new(),
            declared: Vec::new(),
        }
    }

    pub(super) fn report(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.problems.report(span, message);
    }

    fn run(mut self) -> Result<Config, ConfigError> {
        let root = match DeTable::parse(self.text) {
            Ok(root) => root,
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start);
                self.report(
                    at..at,
                    format!("this is not valid TOML: {}", e.message().trim_end()),
                );
                return Err(self.finish_err());
            }
        };
        let mut config = Config {
            active: Vec::new(),
            execution: ExecutionMode::Parallel,
            max_concurrency: None,
            timeout: Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
            shapes: FamilyShapes::default(),
            tools: BTreeMap::new(),
            allowed_roots: None,
            pseudo_files: false,
            guidelines: Vec::new(),
            sandbox: SandboxSettings::default(),
            env: EnvSettings::Local,
            mcp_max_message_bytes: None,
            mcp_max_sessions: None,
            mcp_end_idle_when_full: false,
            mcp_connections: crate::config::McpConnections::default(),
            mcp_trusted_proxies: Vec::new(),
            mcp_task_after: None,
            servers: Vec::new(),
            declared: Vec::new(),
            policy: crate::policy::Policy::default(),
            origin: self.origin.to_owned(),
        };
        self.declared = declared::declared_names(&root, self.registered);
        let mut active = None;
        for (key, value) in root.get_ref() {
            match key.get_ref().as_ref() {
                "tools" => {
                    if let Some(table) = self.table(value, "[tools]") {
                        active = self.tools_section(table, &mut config);
                    }
                }
                "tool" => {
                    if let Some(table) = self.table(value, "[tool]") {
                        for (name, section) in table {
                            self.tool_section(name, section, &mut config);
                        }
                    }
                }
                "paths" => {
                    if let Some(table) = self.table(value, "[paths]") {
                        self.paths_section(table, &mut config);
                    }
                }
                "prompt" => {
                    if let Some(table) = self.table(value, "[prompt]") {
                        self.prompt_section(table, &mut config);
                    }
                }
                "sandbox" => {
                    if let Some(table) = self.table(value, "[sandbox]") {
                        config.sandbox = self.sandbox_section(table);
                    }
                }
                "env" => {
                    if let Some(table) = self.table(value, "[env]") {
                        config.env = self.env_section(table, key.span());
                    }
                }
                "mcp" => {
                    if let Some(table) = self.table(value, "[mcp]") {
                        self.mcp_section(table, &mut config);
                    }
                }
                "policy" => {
                    if let Some(table) = self.table(value, "[policy]") {
                        config.policy = self.policy_section(table);
                    }
                }
                other => {
                    let hint = suggest(other, SECTIONS.iter().copied())
                        .map(|s| format!("did you mean [{s}]? "))
                        .unwrap_or_default();
                    self.report(
                        key.span(),
                        format!(
                            "unknown section `{other}`; {hint}the sections are [tools], [tool.<name>], [paths], [prompt], [sandbox], [env], [mcp] and [policy]"
                        ),
                    );
                }
            }
        }
        config.active = match active {
            Some(list) => list,
            None => self.default_active(),
        };
        for (entry, span) in std::mem::take(&mut self.mounted_active) {
            if let Some(problem) = self.mounted_active_problem(&entry, &config.servers) {
                self.report(span, problem);
            }
        }
        if self.problems.is_empty() {
            Ok(config)
        } else {
            Err(self.finish_err())
        }
    }

    fn finish_err(mut self) -> ConfigError {
        let problems = std::mem::take(&mut self.problems)
            .into_sorted()
            .iter()
            .map(|(at, message)| {
                let (line, column) = line_column(self.text, *at);
                ConfigProblem {
                    origin: self.origin.to_owned(),
                    line,
                    column,
                    message: message.clone(),
                }
            })
            .collect();
        ConfigError { problems }
    }

    fn is_registered(&self, name: &str) -> bool {
        self.registered.iter().any(|t| t.spec().name == name)
            || self.declared.iter().any(|d| d == name)
    }

    fn definition(&self, name: &str) -> Option<&Arc<dyn ToolDefinition>> {
        self.registered.iter().find(|t| t.spec().name == name)
    }

    /// Why `name` is no tool: the closest name and every tool there is, the ones this
    /// file declares (`[tool.<name>]`) with the registered ones.
    fn unknown_tool(&self, name: &str) -> String {
        let names: Vec<&str> = self
            .registered
            .iter()
            .map(|t| t.spec().name.as_str())
            .chain(self.declared.iter().map(|d| d.as_str()))
            .collect();
        let hint = suggest(name, names.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        format!(
            "no tool named `{name}` is registered; {hint}the registered tools are: {}",
            sorted.join(", ")
        )
    }

    pub(super) fn table<'v>(
        &mut self,
        value: &'v Spanned<DeValue<'a>>,
        what: &str,
    ) -> Option<&'v DeTable<'a>> {
        self.problems.table(value, what)
    }

    fn tools_section(&mut self, table: &DeTable<'a>, config: &mut Config) -> Option<Vec<String>> {
        let mut active = None;
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "active" => active = self.active_list(value),
                "execution" => {
                    if let Some(mode) = self.mode(value, "execution") {
                        config.execution = mode;
                    }
                }
                "max_concurrency" => match integer(value) {
                    Some(n) if n >= 1 => config.max_concurrency = usize::try_from(n).ok(),
                    _ => self.report(
                        value.span(),
                        "`max_concurrency` must be a whole number of at least 1; remove it for no bound",
                    ),
                },
                "timeout_secs" => match integer(value).and_then(|n| u64::try_from(n).ok()) {
                    Some(0) => config.timeout = None,
                    Some(n) => config.timeout = Some(Duration::from_secs(n)),
                    None => self.report(
                        value.span(),
                        "`timeout_secs` must be a whole number of seconds, 0 for no timeout",
                    ),
                },
                "shapes" => match values::shapes(value) {
                    Ok(shapes) => config.shapes = shapes,
                    Err(problems) => {
                        for (span, problem) in problems {
                            self.report(span, problem);
                        }
                    }
                },
                other => self.unknown_key(key.span(), other, "[tools]", &TOOLS_KEYS),
            }
        }
        active
    }

    /// `[tools] active` of the embedded default (its one home), without the tools this
    /// binary does not register.
    fn default_active(&self) -> Vec<String> {
        let Ok(root) = DeTable::parse(DEFAULT_TOML) else {
            return Vec::new();
        };
        let Some(DeValue::Table(tools)) = root.get_ref().get("tools").map(Spanned::get_ref) else {
            return Vec::new();
        };
        let Some(DeValue::Array(names)) = tools.get("active").map(Spanned::get_ref) else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|name| name.get_ref().as_str())
            .filter(|name| self.is_registered(name))
            .map(str::to_owned)
            .collect()
    }

    fn active_list(&mut self, value: &Spanned<DeValue<'a>>) -> Option<Vec<String>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.report(
                value.span(),
                "`active` must be a list of tool names, e.g. [\"read\", \"bash\"]",
            );
            return None;
        };
        let mut names: Vec<String> = Vec::new();
        for item in items.iter() {
            let Some(name) = item.get_ref().as_str() else {
                self.report(
                    item.span(),
                    "each entry of `active` must be a tool name in quotes",
                );
                continue;
            };
            if names.iter().any(|n| n == name) {
                self.report(
                    item.span(),
                    format!("`{name}` is listed twice in `active`; keep one"),
                );
            } else if !self.is_registered(name)
                && (name.contains(names::MOUNT_SEPARATOR) || names::is_glob(name))
            {
                // A mounted server's tool: checked against [mcp.servers] once all is read.
                self.mounted_active.push((name.to_owned(), item.span()));
                names.push(name.to_owned());
            } else if !self.is_registered(name) {
                if !self.lenient {
                    let message = self.unknown_tool(name);
                    self.report(item.span(), message);
                }
            } else {
                names.push(name.to_owned());
            }
        }
        Some(names)
    }

    fn mode(&mut self, value: &Spanned<DeValue<'a>>, key: &str) -> Option<ExecutionMode> {
        self.problems.mode(value, key)
    }

    pub(super) fn unknown_key(
        &mut self,
        span: Range<usize>,
        key: &str,
        section: &str,
        allowed: &[&str],
    ) {
        self.problems.unknown_key(span, key, section, allowed);
    }

    fn tool_section(
        &mut self,
        name: &Spanned<std::borrow::Cow<'a, str>>,
        section: &Spanned<DeValue<'a>>,
        config: &mut Config,
    ) {
        let tool_name = name.get_ref().as_ref();
        if let DeValue::Table(table) = section.get_ref()
            && declared::declares(table)
        {
            if self.definition(tool_name).is_some() {
                self.report(
                    name.span(),
                    format!(
                        "[tool.{tool_name}] declares a tool with `command` or `script`, but a tool named `{tool_name}` is already registered; give the declared tool another name"
                    ),
                );
            } else {
                if let Some(tool) = declared::read(name, table, &mut self.problems) {
                    config.declared.push(tool);
                }
            }
            return;
        }
        let Some(definition) = self.definition(tool_name).cloned() else {
            let message = self.unknown_tool(tool_name);
            self.report(name.span(), message);
            return;
        };
        let header = format!("[tool.{tool_name}]");
        let Some(table) = self.table(section, &header) else {
            return;
        };
        let mut settings = ToolSettings::default();
        let mut key_spans = Vec::new();
        for (key, value) in table {
            if key.get_ref() == "mode" {
                settings.mode = self.mode(value, "mode");
            } else {
                key_spans.push((key.get_ref().to_string(), key.span()));
                settings
                    .raw
                    .insert(key.get_ref().to_string(), to_json(value.get_ref()));
            }
        }
        match definition.spec().config {
            None => {
                for (key, span) in &key_spans {
                    self.report(
                        span.clone(),
                        format!(
                            "unknown key `{key}` in {header}; tool `{tool_name}` has no configuration of its own, so only `mode` is allowed there"
                        ),
                    );
                }
            }
            Some(spec) if !settings.raw.is_empty() => {
                match (spec.load)(Json::Object(settings.raw.clone())) {
                    Ok(loaded) => settings.config = Some(loaded),
                    Err(message) => {
                        // Point at the key the loader names, else at the section header.
                        let span = key_spans
                            .iter()
                            .find(|(key, _)| message.contains(&format!("`{key}`")))
                            .map_or_else(|| name.span(), |(_, span)| span.clone());
                        self.report(
                            span,
                            format!(
                                "invalid configuration for tool `{tool_name}`: {message}; fix the keys of {header}"
                            ),
                        );
                    }
                }
            }
            Some(_) => {}
        }
        config.tools.insert(tool_name.to_owned(), settings);
    }

    /// A whole number of seconds, at least 1; `None`, reported, for anything else.
    pub(super) fn seconds(&mut self, value: &Spanned<DeValue<'a>>, key: &str) -> Option<Duration> {
        match integer(value).and_then(|n| u64::try_from(n).ok()) {
            Some(n) if n > 0 => Some(Duration::from_secs(n)),
            _ => {
                self.report(
                    value.span(),
                    format!("`{key}` must be a whole number of seconds, at least 1"),
                );
                None
            }
        }
    }

    /// A boolean; `None`, reported, for anything else.
    pub(super) fn boolean(&mut self, value: &Spanned<DeValue<'a>>, key: &str) -> Option<bool> {
        match value.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.report(
                    value.span(),
                    format!("`{key}` must be true or false (without quotes)"),
                );
                None
            }
        }
    }

    pub(super) fn strings(
        &mut self,
        value: &Spanned<DeValue<'a>>,
        key: &str,
        what: &str,
    ) -> Option<Vec<String>> {
        let list = match value.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .map(|item| {
                    item.get_ref()
                        .as_str()
                        .map(str::to_owned)
                        .ok_or(item.span())
                })
                .collect::<Result<Vec<_>, _>>(),
            _ => Err(value.span()),
        };
        match list {
            Ok(list) => Some(list),
            Err(span) => {
                self.report(
                    span,
                    format!("`{key}` must be a list of {what} in quotes, e.g. [\"…\"]"),
                );
                None
            }
        }
    }
}
