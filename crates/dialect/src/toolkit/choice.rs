//! The request's `tool_choice`, settled once for every dialect: which tools may be called,
//! which the prompt shows, whether a call is forced, whether several may come.
//!
//! Peers decide this in each family's code, and their bug trackers show the result:
//! `tool_choice` silently ignored by one family, `"required"` with no tools generating
//! freely in another. Here every dialect asks [`Choice::of`], so a named tool the request
//! lacks, or a call required when no tool may be called, is the same error everywhere,
//! and `"none"` hides the tools from every prompt (a model shown no tools is not tempted
//! to call one it may not).

use toolbridge_chat::{ChatRequest, Tool};

use crate::dialect::{Constraint, Prepared};
use crate::error::{unknown_tool, DialectError, DialectErrorKind};
use crate::parser::StreamParser;
use crate::toolkit::off_format::{held_openings, DeclaredTools, OffFormatCalls};

/// The tool choice of a request, settled.
pub struct Choice<'a> {
    /// The tools the model may call, in request order (empty: no call constraint).
    pub callable: Vec<&'a Tool>,
    /// The tools the prompt shows: the request's, or none for `tool_choice: "none"`.
    pub shown: &'a [Tool],
    /// Whether a call must come first (`"required"` or a named function).
    pub forced: bool,
    /// Whether several calls may come at once.
    pub parallel: bool,
}

impl<'a> Choice<'a> {
    /// Settles `request`'s choice; a named tool the request lacks, or a call required
    /// when none may be called, is an error.
    pub fn of(request: &'a ChatRequest) -> Result<Choice<'a>, DialectError> {
        let choice = request.effective_tool_choice();
        let callable = if choice.allows_calls() {
            callable_tools(request, choice.allowed_names())?
        } else {
            Vec::new()
        };
        let forced = choice.requires_call();
        if forced && callable.is_empty() {
            return Err(DialectError::from(DialectErrorKind::NoCallableTools));
        }
        Ok(Choice {
            callable,
            shown: shown_tools(request),
            forced,
            parallel: request.allows_parallel_calls(),
        })
    }

    /// Whether the grammar waits for a trigger (`auto`) rather than starting at once.
    pub fn lazy(&self) -> bool {
        !self.forced
    }

    /// The request prepared once its prompt is rendered: the call grammar `constraint`
    /// builds over the callable tools (given them, [`Choice::lazy`] and whether calls may
    /// be parallel; none when no tool may be called), `parser` [wrapped](Choice::wrap), and
    /// the request's stops.
    pub fn prepared(
        &self,
        request: &ChatRequest,
        prompt: String,
        parser: Box<dyn StreamParser + Send>,
        constraint: impl FnOnce(&[&Tool], bool, bool) -> Result<Constraint, DialectError>,
    ) -> Result<Prepared, DialectError> {
        let constraint = if self.callable.is_empty() {
            None
        } else {
            Some(constraint(&self.callable, self.lazy(), self.parallel)?)
        };
        Ok(Prepared {
            parser: self.wrap(parser, constraint.as_ref()),
            prompt,
            constraint,
            stop: request.stop_sequences().to_vec(),
        })
    }

    /// `parser` wrapped to read off-format calls of the callable tools, when there are any;
    /// those `constraint` holds to a call once opened are streamed.
    pub fn wrap(
        &self,
        parser: Box<dyn StreamParser + Send>,
        constraint: Option<&Constraint>,
    ) -> Box<dyn StreamParser + Send> {
        if self.callable.is_empty() {
            parser
        } else {
            Box::new(OffFormatCalls::new(
                parser,
                DeclaredTools::new(&self.callable),
                held_openings(constraint),
            ))
        }
    }
}

/// The tools the prompt shows: all the request's, unless `tool_choice` is `"none"`.
pub fn shown_tools(request: &ChatRequest) -> &[Tool] {
    if request.effective_tool_choice().allows_calls() {
        request.tools()
    } else {
        &[]
    }
}

/// The request's tools among `names` (all of them without a list), in request order. A
/// name the request does not declare is an error, not silently ignored.
fn callable_tools<'a>(
    request: &'a ChatRequest,
    names: Option<Vec<&str>>,
) -> Result<Vec<&'a Tool>, DialectError> {
    let tools = request.tools();
    let Some(names) = names else {
        return Ok(tools.iter().collect());
    };
    if let Some(unknown) = names.iter().find(|name| request.tool(name).is_none()) {
        return Err(unknown_tool(unknown));
    }
    Ok(tools
        .iter()
        .filter(|tool| names.contains(&tool.name()))
        .collect())
}
