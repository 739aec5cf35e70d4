//! A prompt style as a [`Dialect`]: tool calling for models whose template knows nothing
//! of tools (the styles themselves are in [`crate::dialects::styles`]).
//!
//! Seed 000 shows the same conversation under several styles, each a different way of
//! telling an untrained model about its tools. A style is two things that must agree: the
//! system prompt that describes the tools ([`ToolsPrompt`]), and the call syntax the model
//! is asked to use ([`CallSyntax`]: how past calls are written into history, the grammar of
//! new calls, their parser). [`PromptStyle`] joins one of each into a [`Dialect`], so a new
//! style is a small file with its prompt text and its choice of syntax.
//!
//! The prompt is made as the seed's system made it:
//!
//! 1. the style's text (or, with no tools and a `response_format` schema, "Please respond
//!    in JSON format with the following schema: …") becomes a system message, put first,
//!    or written before the text of the conversation's first system message, joined by a
//!    newline, when there is one;
//! 2. the history is rewritten for what the template can render ([`rewrite_history`]: past
//!    calls in the style's syntax, system and tool turns folded into user turns where the
//!    template demands strict alternation);
//! 3. the template renders it with `add_generation_prompt` and no `tools` (the style's
//!    text is the description of them).
//!
//! The constraint is the style's call grammar, lazy on its trigger unless `tool_choice`
//! forces a call; with no tools, the `response_format` schema's grammar from the first byte.
//! Its [`PromptParts`] give the two parts the seed prints apart (its first and second
//! `Prompt` blocks).

use serde_json::Value;
use toolbridge_chat::{ChatRequest, Message, Tool};
use toolbridge_grammar::{Grammar, Trigger};

use crate::answer_format::AnswerFormat;
use crate::dialect::{
    messages_json, tools_json, ChatTemplate, Constraint, Dialect, Prepared, PromptParts,
    RenderInput,
};
use crate::error::{template_error, DialectError};
use crate::parser::StreamParser;
use crate::rewrite::{rewrite_history, CallWriter, ToolCallTags};
use crate::toolkit::choice::{shown_tools, Choice};
use crate::toolkit::prompt_text::with_system_prompt;

/// The system prompt of a style: how it describes the tools to the model.
pub trait ToolsPrompt: Send + Sync {
    /// The style's name in the registry (`short`, `hermes_2_pro`, …).
    fn name(&self) -> &'static str;

    /// The text that describes `tools`, each as OpenAI sends it (`{"type": "function",
    /// "function": {…}}`); `answer` is the `response_format` schema a final answer must
    /// follow, for the styles that say so.
    fn describe(&self, tools: &[Value], answer: Option<&Value>) -> String;
}

/// How calls are written: in past turns, in the grammar of new ones, and read back. The
/// three live together so that the model is shown, constrained to and parsed in one syntax.
pub trait CallSyntax: Send + Sync {
    /// Writes past calls into assistant turns the template cannot render them in.
    fn writer(&self) -> &dyn CallWriter;

    /// The text that opens a call, switching a lazy grammar on; `None` where the whole
    /// answer is in the syntax, so the grammar holds from the first byte.
    fn trigger(&self) -> Option<&'static str>;

    /// The grammar of one answer that calls one of `tools`, starting at the trigger;
    /// `answer` is the `response_format` schema, for syntaxes that also carry the answer.
    fn grammar(&self, tools: &[&Tool], answer: Option<&Value>) -> Result<Grammar, DialectError>;

    /// A fresh parser for output in this syntax.
    fn parser(&self) -> Box<dyn StreamParser + Send>;
}

/// A [`Dialect`] made of a style's prompt and call syntax; see the module docs.
pub struct PromptStyle<P> {
    prompt: P,
    syntax: &'static dyn CallSyntax,
}

impl<P: ToolsPrompt> PromptStyle<P> {
    pub fn new(prompt: P, syntax: &'static dyn CallSyntax) -> Self {
        PromptStyle { prompt, syntax }
    }

    /// How past calls are written for `request`: in the style's syntax when it shows
    /// tools, else plainly in `<tool_call>` tags, as the seed's sections without tools do
    /// (a model not asked for the style's syntax is not shown it).
    fn writer(&self, request: &ChatRequest) -> &dyn CallWriter {
        if shown_tools(request).is_empty() {
            &ToolCallTags
        } else {
            self.syntax.writer()
        }
    }

    /// `messages` of `request` rewritten for `template` and rendered with the generation
    /// prompt.
    fn render(
        &self,
        request: &ChatRequest,
        messages: &[Message],
        template: &ChatTemplate,
    ) -> Result<String, DialectError> {
        let history = rewrite_history(messages, template.caps(), self.writer(request));
        template
            .render(&RenderInput {
                messages: messages_json(&history)?,
                tools: &[],
                add_generation_prompt: true,
            })
            .map_err(template_error)
    }

    /// The constraint for `request`: calls to the callable tools, else the response schema,
    /// else none.
    fn constraint(
        &self,
        request: &ChatRequest,
        choice: &Choice,
    ) -> Result<Option<Constraint>, DialectError> {
        let answer = AnswerFormat::of(request)?;
        if !choice.callable.is_empty() {
            let trigger = self.syntax.trigger();
            return Ok(Some(Constraint::new(
                self.syntax
                    .grammar(&choice.callable, answer.as_ref().map(AnswerFormat::schema))?,
                trigger
                    .map(|word| Trigger::Word(word.to_string()))
                    .into_iter()
                    .collect(),
                trigger.is_some() && choice.lazy(),
            )));
        }
        Ok(answer.as_ref().map(AnswerFormat::constraint))
    }
}

impl<P: ToolsPrompt> Dialect for PromptStyle<P> {
    fn name(&self) -> &'static str {
        self.prompt.name()
    }

    fn prepare(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<Prepared, DialectError> {
        let choice = Choice::of(request)?;
        let messages = match self.system_prompt(request)? {
            Some(text) => with_system_prompt(&request.messages, &text),
            None => request.messages.clone(),
        };
        Ok(Prepared {
            prompt: self.render(request, &messages, template)?,
            constraint: self.constraint(request, &choice)?,
            stop: request.stop_sequences().to_vec(),
            parser: self.syntax.parser(),
        })
    }

    fn parser(&self) -> Box<dyn StreamParser + Send> {
        self.syntax.parser()
    }

    fn prompt_parts(&self) -> Option<&dyn PromptParts> {
        Some(self)
    }

    fn formats_answers(&self) -> bool {
        true
    }
}

impl<P: ToolsPrompt> PromptParts for PromptStyle<P> {
    /// The system prompt this style injects for `request`: the tools' description, else
    /// the `response_format` schema's instruction, else none.
    fn system_prompt(&self, request: &ChatRequest) -> Result<Option<String>, DialectError> {
        let shown = shown_tools(request);
        if !shown.is_empty() {
            let tools = tools_json(shown)?;
            let tools = tools.as_array().map_or(&[][..], Vec::as_slice);
            let answer = AnswerFormat::of(request)?;
            let answer = answer.as_ref().map(AnswerFormat::schema);
            return Ok(Some(self.prompt.describe(tools, answer)));
        }
        Ok(AnswerFormat::of(request)?.and_then(|answer| answer.instruction()))
    }

    /// The conversation alone, without the injected system prompt, as the seed's first
    /// `Prompt` block shows it.
    fn conversation(
        &self,
        request: &ChatRequest,
        template: &ChatTemplate,
    ) -> Result<String, DialectError> {
        self.render(request, &request.messages, template)
    }
}
