//! The active set of tools: registered definitions + configuration → the runner's tools,
//! its configuration, the prompt sections, provider schemas and the catalog.
//!
//! ```
//! use pi_tools::config::Config;
//! use pi_tools::toolbox::Toolbox;
//! use pi_tools::Extensions;
//!
//! let registered = Vec::new(); // usually every tool of the registry
//! let config = Config::embedded(&registered).expect("the default is valid");
//! let toolbox = Toolbox::new(registered, &config, Extensions::new());
//! assert!(toolbox.active().is_empty());
//! assert_eq!(toolbox.prompt().available_tools, ["(none)"]);
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::core::{
    AgentTool, BatchOutcome, BeforeToolCall, Extensions, RunnerConfig, ToolSet, UnknownToolMessage,
};
use crate::dialect::native::{NATIVE_SERVING_TOOLS, Native, Shapes, native_shape};
use crate::dialect::{self, Dialect, DialectError, DialectSchemas};
use crate::env::EnvOf;
use crate::env::local::process_env;
use crate::policy::{Approver, PolicyHook};
use crate::prompt::PromptSections;
use crate::session::{ClientRoots, Session, SessionPolicyGate, WithSession};
use crate::tool::{ToolDefinition, ToolRole, extend_description, wrap_with_mode};

/// One active tool as a dialect is offered it.
enum Shaped<'a> {
    /// In its pi-tools shape.
    Own(&'a dyn ToolDefinition),
    /// The family's own tool, as the request sends it.
    Native(Value),
}

/// The tools a session works with, in the configured order, ready for the runner.
pub struct Toolbox {
    registered: Vec<Arc<dyn ToolDefinition>>,
    /// Each registered tool's place in `registered`, by name (the first of a name).
    by_name: HashMap<String, usize>,
    active: Vec<Arc<dyn ToolDefinition>>,
    /// The names in `active`: a catalog of thousands of mounted tools is activated in
    /// linear time, not by a search of both lists per tool.
    active_names: HashSet<String>,
    config: Config,
    extensions: Extensions,
    tool_set: ToolSet,
    /// The session the toolbox's batches belong to: its environment and `[policy]` as the
    /// hook (none when it allows everything), kept so what a person allows for the session
    /// stays allowed across batches.
    session: Arc<Session>,
    /// The tools turned on only to serve some family's native shapes (not named in
    /// `active`): left out for the families that get the pi-tools shapes.
    serving_only: HashSet<String>,
}

impl Toolbox {
    /// The active set `config` names, in its order, drawn from `registered`.
    ///
    /// Active names that are not registered are ignored (a validated [`Config`] has none
    /// but mounted servers' tools, which join `registered` once their server listed them).
    /// A glob (`"github__*"`) activates every registered tool it matches, in their order.
    /// `extensions` reach every tool's context (the execution environment lives there).
    /// The tools the configuration declares (`[tool.<name>]` with `command` or `script`)
    /// join `registered`, unless a tool of that name is there already.
    pub fn new(
        registered: Vec<Arc<dyn ToolDefinition>>,
        config: &Config,
        extensions: Extensions,
    ) -> Self {
        #[cfg(feature = "process")]
        let registered = with_declared(registered, config);
        let mut by_name = HashMap::with_capacity(registered.len());
        for (i, tool) in registered.iter().enumerate() {
            by_name.entry(tool.spec().name.clone()).or_insert(i);
        }
        let mut toolbox = Toolbox {
            registered,
            by_name,
            active: Vec::new(),
            active_names: HashSet::new(),
            config: config.clone(),
            session: Arc::new(Session::new(
                extensions.env().cloned().unwrap_or_else(process_env),
            )),
            extensions,
            tool_set: ToolSet::new([]),
            serving_only: HashSet::new(),
        };
        toolbox.set_policy_hook(None);
        toolbox.activate_configured();
        toolbox.offer_jobs();
        toolbox.tool_set = toolbox.agent_tools().into_iter().collect();
        toolbox
    }

    /// Activates what `[tools] active` names, in its order (a glob: every registered tool it
    /// matches), and the tools that serve the native shapes when they are asked for.
    fn activate_configured(&mut self) {
        let config = self.config.clone();
        for name in &config.active {
            if crate::config::is_glob(name) {
                // `github__*`: a mounted server's tools, in the order it lists them.
                let matching: Vec<String> = self
                    .registered
                    .iter()
                    .map(|t| t.spec().name.to_owned())
                    .filter(|t| crate::config::glob_match(name, t))
                    .collect();
                for tool in matching {
                    self.push_active(&tool);
                }
            } else {
                self.push_active(name);
            }
        }
        if config.shapes.any_native() && self.active_names.contains("edit") {
            // The tools the native shapes are served by (they stand for edit and write).
            for name in NATIVE_SERVING_TOOLS {
                if self.push_active(name) {
                    self.serving_only.insert(name.to_owned());
                }
            }
        }
    }

    /// Replaces the mounted servers' tools with `mounted`, what `Mounts::definitions` lists
    /// after a server's tool list changed (`Mounts::changes`, feature `mount`): the active set is
    /// made again from the configuration (a glob such as `github__*` takes in a new tool of
    /// its server), the tools activated since ([`Toolbox::activate_added`]) stay while they
    /// are registered, and a tool the server no longer lists leaves. The tool set and the
    /// prompt follow; the session (its policy, approver and roots) stays.
    pub fn replace_mounted(&mut self, mounted: Vec<Arc<dyn ToolDefinition>>) {
        let was_active = self.active_names();
        self.registered
            .retain(|tool| tool.spec().mounted_from().is_none());
        self.registered.extend(mounted);
        self.rebuild(&was_active);
    }

    /// Replaces the tools the configuration declares with `declared`, and `[tools] active`
    /// with `active`: what a server takes from its configuration file read again
    /// ([`crate::config::reread`]). A declared tool that is gone leaves the active set, a new
    /// one joins it where `active` names it, and the tools activated since
    /// ([`Toolbox::activate_added`]) stay while they are registered (declared ones only when
    /// `active` names them). The tool set and the prompt follow; the session (its policy,
    /// approver and roots) stays, and so does every other key of the configuration. A call
    /// already running keeps the tool it started with.
    #[cfg(feature = "process")]
    pub fn replace_declared(
        &mut self,
        declared: Vec<crate::config::DeclaredTool>,
        active: Vec<String>,
    ) {
        let was_active: Vec<String> = self
            .active
            .iter()
            .filter(|tool| tool.spec().origin != crate::tool::ToolOrigin::Declared)
            .map(|tool| tool.spec().name.to_owned())
            .collect();
        self.config.declared = declared;
        self.config.active = active;
        self.registered
            .retain(|tool| tool.spec().origin != crate::tool::ToolOrigin::Declared);
        self.registered = with_declared(std::mem::take(&mut self.registered), &self.config);
        self.rebuild(&was_active);
    }

    /// The index, the active set, the job parameters and the tool set made again from
    /// `registered` and the configuration, with `was_active` kept active while registered.
    fn rebuild(&mut self, was_active: &[String]) {
        self.by_name.clear();
        for (i, tool) in self.registered.iter().enumerate() {
            self.by_name.entry(tool.spec().name.clone()).or_insert(i);
        }
        self.active.clear();
        self.active_names.clear();
        self.serving_only.clear();
        self.activate_configured();
        for name in was_active {
            self.push_active(name);
        }
        self.offer_jobs();
        self.tool_set = self.agent_tools().into_iter().collect();
    }

    /// With a job tool active ([`ToolRole::Jobs`]), the shell tools take the parameters
    /// that start a job; without one their schemas stay as they are.
    fn offer_jobs(&mut self) {
        if !self.active.iter().any(|t| t.spec().role == ToolRole::Jobs) {
            return;
        }
        for definition in &mut self.active {
            let spec = definition.spec();
            let offered = spec.parameters["properties"].get("background").is_some();
            if spec.role != ToolRole::Shell || offered {
                continue;
            }
            let mut spec = spec.clone();
            if let Some(properties) = spec.parameters["properties"].as_object_mut() {
                properties.extend(crate::env::jobs::start_parameters());
            }
            spec.description = format!(
                "{} {}",
                spec.description,
                crate::env::jobs::START_DESCRIPTION
            );
            *definition = crate::tool::with_spec(definition.clone(), spec);
        }
    }

    /// Every registered definition.
    pub fn registered(&self) -> &[Arc<dyn ToolDefinition>] {
        &self.registered
    }

    /// The active definitions, in order.
    pub fn active(&self) -> &[Arc<dyn ToolDefinition>] {
        &self.active
    }

    /// The names of the active tools, in order.
    pub fn active_names(&self) -> Vec<String> {
        self.active
            .iter()
            .map(|t| t.spec().name.to_owned())
            .collect()
    }

    /// The configuration the toolbox was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The active tools as the runner sees them: each with its loaded `[tool.<name>]`
    /// configuration (or its declared default) and its mode override applied. The tools
    /// that serve the native shapes (`apply_patch`, `str_replace_based_edit_tool`) run with
    /// `[tool.edit]`'s configuration, since they stand for edit.
    pub fn agent_tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.active
            .iter()
            .map(|definition| {
                let name = &definition.spec().name;
                let settings = self.config.tool(name);
                // The tools that serve the native shapes stand for edit and have no
                // configuration of their own: `[tool.edit]` (its file size limit) is theirs.
                let config = if NATIVE_SERVING_TOOLS.contains(&name.as_str()) {
                    self.config.tool("edit").and_then(|s| s.config.clone())
                } else {
                    settings.and_then(|s| s.config.clone())
                };
                wrap_with_mode(definition.clone(), config, settings.and_then(|s| s.mode))
            })
            .collect()
    }

    /// The active tools as a [`ToolSet`] (argument validators are compiled once and kept
    /// until the active set changes).
    pub fn tool_set(&self) -> &ToolSet {
        &self.tool_set
    }

    /// Asks `approver` about the calls `[policy]` says `ask` for; without one they are
    /// denied, since no one can be asked.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.set_policy_hook(Some(approver));
        self
    }

    /// The session the toolbox's batches belong to (the runner configuration carries it):
    /// the environment, and the policy with its approver. The program that made the toolbox
    /// ends it ([`Session::end`]) when its work is done, which ends the processes its
    /// batches left running.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Makes the session follow its client's roots (a server's clients that list roots then
    /// work in them, see [`ClientRoots`]).
    pub fn with_client_roots(mut self, roots: ClientRoots) -> Self {
        self.remake_session(self.policy_hook(), Some(roots));
        self
    }

    /// Makes the session again with a policy hook asking `approver`, its roots kept.
    fn set_policy_hook(&mut self, approver: Option<Arc<dyn Approver>>) {
        let hook = self.make_policy_hook(approver);
        let roots = self.session.client_roots().cloned();
        self.remake_session(hook, roots);
    }

    /// The session again, with `hook` and `roots` (it is made before any batch runs, so
    /// nothing of the one it replaces needs ending).
    fn remake_session(&mut self, hook: Option<Arc<PolicyHook>>, roots: Option<ClientRoots>) {
        let mut session = Session::new(Arc::clone(self.session.env()));
        if let Some(hook) = hook {
            session = session.with_policy(hook);
        }
        if let Some(roots) = roots {
            session = session.with_client_roots(roots);
        }
        self.session = Arc::new(session);
    }

    /// `[policy]` as a before-call hook, or `None` when the policy allows every call. The
    /// runner configuration carries it already; a caller with a hook of its own runs this
    /// one first and its own only when this one continues.
    pub fn policy_hook(&self) -> Option<Arc<PolicyHook>> {
        self.session.policy().cloned()
    }

    fn make_policy_hook(&self, approver: Option<Arc<dyn Approver>>) -> Option<Arc<PolicyHook>> {
        if !self.config.policy.is_active() {
            return None;
        }
        let hook = PolicyHook::new(
            Arc::new(self.config.policy.clone()),
            self.extensions.clone(),
        );
        Some(Arc::new(match approver {
            Some(approver) => hook.with_approver(approver),
            None => hook,
        }))
    }

    /// How batches run: execution mode, concurrency bound, per-call timeout, the
    /// extensions with the toolbox's [`session`](Self::session) (its environment and
    /// policy), and `[policy]` as the before-call hook: the gate that judges each call by its
    /// session's policy ([`SessionPolicyGate`]), so a server of many sessions (the MCP
    /// server) gives each a session of its own whose policy asks its own person. A denied call
    /// ends in the prepare phase, before anything starts; the after-hook is left for the
    /// caller to set. A call to a tool that is registered but not active gets an error saying
    /// so and naming the configuration key that turns it on (as of now: take a new runner
    /// configuration after [`Toolbox::activate_added`]).
    pub fn runner_config(&self) -> RunnerConfig {
        let active = self.active_names();
        let inactive: Vec<String> = self
            .registered
            .iter()
            .map(|t| t.spec().name.to_owned())
            .filter(|name| !active.contains(name))
            .collect();
        let unknown_tool: UnknownToolMessage = Arc::new(move |name: &str| {
            inactive
                .iter()
                .any(|n| n == name)
                .then(|| inactive_tool_message(name, &active))
        });
        RunnerConfig {
            execution: self.config.execution,
            max_concurrency: self.config.max_concurrency,
            timeout: self.config.timeout,
            extensions: self
                .extensions
                .clone()
                .with_session(Arc::clone(&self.session)),
            unknown_tool: Some(unknown_tool),
            before_tool_call: self
                .policy_hook()
                .map(|hook| Arc::new(SessionPolicyGate::new(hook)) as Arc<dyn BeforeToolCall>),
            ..RunnerConfig::default()
        }
    }

    /// The system prompt's sections for the active tools.
    pub fn prompt(&self) -> PromptSections {
        PromptSections::new(&self.active, &self.config.guidelines)
            .with_sandbox_note(&self.active, self.sandbox_note().as_deref())
    }

    /// Every active tool's wire description in `dialect`, in order, or the first tool the
    /// dialect cannot express (all or nothing). A catalog of tools from several owners
    /// wants [`Toolbox::dialect_schemas`], which leaves such a tool out instead.
    ///
    /// With `[tools] shapes = "native"`, a family that has native tools gets them in place
    /// of the built-ins they stand for ([`crate::dialect::native`]).
    pub fn schemas(&self, dialect: Dialect) -> Result<Vec<Value>, DialectError> {
        self.shaped(dialect)
            .into_iter()
            .map(|tool| match tool {
                Shaped::Native(value) => Ok(value),
                Shaped::Own(tool) => dialect::tool_schema(tool, dialect),
            })
            .collect()
    }

    /// The active tools as `dialect` is offered them: each in its pi-tools shape, or, with
    /// native shapes, the family's own tool in place of the built-ins it stands for.
    fn shaped(&self, dialect: Dialect) -> Vec<Shaped<'_>> {
        self.active
            .iter()
            .filter_map(|t| match self.native_shape(dialect, &t.spec().name) {
                Native::Replace(value) => Some(Shaped::Native(value)),
                Native::Drop => None,
                Native::Keep => Some(Shaped::Own(t.as_ref())),
            })
            .collect()
    }

    /// [`native_shape`], with edit and write kept when the tool that stands for them in
    /// `dialect` is not active (it is turned on beside edit only).
    /// For a family that gets the pi-tools shapes: every tool kept, but those turned on only
    /// to serve another family's native shapes.
    fn native_shape(&self, dialect: Dialect, tool: &str) -> Native {
        if self.config.shapes.of(dialect) != Shapes::Native {
            return if self.serving_only.contains(tool) {
                Native::Drop
            } else {
                Native::Keep
            };
        }
        let shape = native_shape(dialect, tool);
        let serving = match dialect {
            Dialect::Anthropic => dialect::native::ANTHROPIC_TEXT_EDITOR_NAME,
            _ => "apply_patch",
        };
        if shape == Native::Drop
            && matches!(tool, "edit" | "write")
            && !self.active_names.contains(serving)
        {
            return Native::Keep;
        }
        shape
    }

    /// The active tools `dialect`'s model sees, by the names it sees them under (with
    /// native shapes, the family's own tools in place of the built-ins they stand for).
    pub fn offered(&self, dialect: Dialect) -> Vec<Arc<dyn ToolDefinition>> {
        self.active
            .iter()
            .filter(|t| self.native_shape(dialect, &t.spec().name) != Native::Drop)
            .cloned()
            .collect()
    }

    /// Every active tool's wire description in `dialect`, in order, beside the tools the
    /// dialect cannot express: those are left out of this dialect only, each with its
    /// reason and JSON path (show them to whoever configured the tools).
    pub fn dialect_schemas(&self, dialect: Dialect) -> DialectSchemas {
        let shaped = self.shaped(dialect);
        let own = shaped.iter().filter_map(|tool| match tool {
            Shaped::Own(tool) => Some(*tool),
            Shaped::Native(_) => None,
        });
        let mut schemas = dialect::tool_schemas(own, dialect);
        // The native tools first, in the order of the built-ins they stand for.
        let native: Vec<Value> = shaped
            .into_iter()
            .filter_map(|tool| match tool {
                Shaped::Native(value) => Some(value),
                Shaped::Own(_) => None,
            })
            .collect();
        schemas.schemas.splice(0..0, native);
        schemas
    }

    /// The system prompt's sections as `dialect`'s model sees the tools: by the names it
    /// sees (with native shapes, `str_replace_based_edit_tool` or `apply_patch` in place of
    /// edit and write), and a line saying which shapes it is offered.
    pub fn prompt_for(&self, dialect: Dialect) -> PromptSections {
        let offered = self.offered(dialect);
        let mut sections = PromptSections::new(&offered, &self.config.guidelines)
            .with_sandbox_note(&offered, self.sandbox_note().as_deref());
        if self.config.shapes.of(dialect) == Shapes::Native {
            sections.guidelines.push(format!(
                "Your file and shell tools are the {} ones you were trained on; they run with the same checks as every other tool.",
                dialect.api()
            ));
        }
        sections
    }

    /// The catalog of the active tools, or of every registered tool when `all` is set.
    pub fn catalog(&self, all: bool) -> Catalog {
        let tools = if all { &self.registered } else { &self.active };
        Catalog::new(tools, &self.config, &self.active_names())
    }

    /// Activates the registered tools a batch's results name in `added_tool_names`, for the
    /// next batch and the next prompt; returns the names newly activated, in order.
    /// Names that are not registered, or already active, are ignored.
    pub fn activate_added(&mut self, outcome: &BatchOutcome) -> Vec<String> {
        let mut added = Vec::new();
        for message in &outcome.messages {
            for name in &message.added_tool_names {
                if self.push_active(name) {
                    added.push(name.clone());
                }
            }
        }
        if !added.is_empty() {
            self.offer_jobs();
            self.tool_set = self.agent_tools().into_iter().collect();
        }
        added
    }

    /// The sentence saying where commands may write and whether the network is on, from
    /// the environment the tools work in (the extensions' [`ExecutionEnv`]): what it
    /// enforces, never what the configuration merely says. Without an environment the tools
    /// work unconfined in the process's current directory, and the model is told nothing.
    fn sandbox_note(&self) -> Option<String> {
        self.extensions.env().and_then(|env| env.confinement())
    }

    /// What the descriptions of the tools with `role` say besides their own words: a shell
    /// tells where its commands may write and whether the network is on, so the model reads
    /// it before its first call.
    fn description_addition(&self, role: ToolRole) -> Option<String> {
        match role {
            ToolRole::Shell => self.sandbox_note(),
            ToolRole::General | ToolRole::Explore | ToolRole::Jobs => None,
        }
    }

    fn push_active(&mut self, name: &str) -> bool {
        if self.active_names.contains(name) {
            return false;
        }
        match self.by_name.get(name).map(|&i| &self.registered[i]) {
            Some(definition) => {
                self.active_names.insert(name.to_owned());
                let definition = match self.description_addition(definition.spec().role) {
                    Some(addition) => extend_description(definition.clone(), &addition),
                    None => definition.clone(),
                };
                self.active.push(definition);
                true
            }
            None => false,
        }
    }
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("active", &self.active_names())
            .field("registered", &self.registered.len())
            .finish_non_exhaustive()
    }
}

/// The error for a call to a tool that exists but is switched off: for the model, which
/// tools it can use instead; for the person running it, the key that switches it on.
fn inactive_tool_message(name: &str, active: &[String]) -> String {
    let usable = if active.is_empty() {
        "No tool is active.".to_owned()
    } else {
        format!("The active tools are: {}.", active.join(", "))
    };
    format!(
        "Tool {name} is registered but not active in this configuration, so it cannot be \
         called. {usable} To turn it on, add \"{name}\" to `active` in the `[tools]` section of \
         pi-tools.toml."
    )
}

/// `registered` and the tools `config` declares whose names are not taken.
#[cfg(feature = "process")]
fn with_declared(
    mut registered: Vec<Arc<dyn ToolDefinition>>,
    config: &Config,
) -> Vec<Arc<dyn ToolDefinition>> {
    for tool in crate::declared::definitions(config) {
        if !registered.iter().any(|t| t.spec().name == tool.spec().name) {
            registered.push(tool);
        }
    }
    registered
}
