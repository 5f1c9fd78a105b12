//! What `pi-tools check` says about the active tools' schemas: each tool a dialect leaves
//! out, with the reason and JSON path, and each schema that contradicts itself, as a
//! warning. Every offender is listed in one run, so a catalog of many servers' tools needs
//! one check, not one per offender.

use crate::dialect::Dialect;
use crate::tool::contradictions;
use crate::toolbox::Toolbox;

/// What the schemas check found.
pub(super) struct SchemaFindings {
    /// One line per tool and dialect that cannot express it.
    pub left_out: Vec<String>,
    /// One line per contradiction, naming the tool and the path.
    pub warnings: Vec<String>,
}

/// Renders every active tool in every dialect and looks for contradictions.
pub(super) fn schema_findings(toolbox: &Toolbox) -> SchemaFindings {
    let mut left_out = Vec::new();
    for dialect in Dialect::ALL {
        left_out.extend(toolbox.dialect_schemas(dialect).report());
    }
    let warnings = contradictions::warnings(toolbox.active().iter().map(|t| t.as_ref()))
        .into_iter()
        .map(|line| format!("warning: {line}"))
        .collect();
    SchemaFindings { left_out, warnings }
}

/// The lines `check` prints: a summary when nothing was found, else every finding.
pub(super) fn lines(findings: &SchemaFindings) -> Vec<String> {
    if findings.left_out.is_empty() && findings.warnings.is_empty() {
        return vec!["schemas: every active tool fits every dialect".to_owned()];
    }
    let mut lines = Vec::new();
    if findings.left_out.is_empty() {
        lines.push("schemas: every active tool fits every dialect".to_owned());
    }
    lines.extend(findings.left_out.iter().cloned());
    lines.extend(findings.warnings.iter().cloned());
    lines
}
