//! An engine that plays back scripted outputs, for fast tests of the layers above (the
//! server, the dialects' parsers) without a model.
//!
//! It behaves like a real engine where tests can tell: the output streams in pieces of a
//! settable size, stop strings and `max_tokens` cut it as they would, a [`Flow::Stop`]
//! cancels, usage and cached prompt tokens are reported. A **token is one piece**: the
//! script and the prompt are counted in pieces of [`ScriptedEngine::with_piece_chars`]
//! characters (4 unless set), and `max_tokens` limits the pieces generated. Pieces come
//! at once unless [`ScriptedEngine::with_piece_delay`] paces them as a model would.
//!
//! When a generation carries a constraint, the scripted output is checked against it with
//! the same llguidance program a real engine would enforce, and a script the grammar
//! rejects is an [`EngineErrorKind::Constraint`]: a test whose script disagrees with its
//! dialect's grammar fails loudly instead of testing a parser on text no constrained model
//! could write. Only outputs that end on their own are checked (a stop string or
//! `max_tokens` leaves an unfinished sentence, which a real engine may produce too).

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use toolbridge_grammar::check::Validator;
use toolbridge_grammar::Constraint;

use crate::error::constraint_error;
use crate::stop::StopMatcher;
use crate::{
    Completion, Engine, EngineError, EngineErrorKind, FinishReason, Flow, Generation, ModelInfo,
    Timings, Usage,
};

type ScriptFn = dyn Fn(&Generation) -> String + Send + Sync;

/// Where the outputs come from.
enum Script {
    /// One output per generation, in order; an error once they run out.
    Outputs(Mutex<VecDeque<String>>),
    /// The output computed from the generation asked for.
    Function(Box<ScriptFn>),
}

/// An [`Engine`] that generates what its script says. See the module docs.
pub struct ScriptedEngine {
    model: ModelInfo,
    script: Script,
    piece_chars: usize,
    piece_delay: Duration,
    received: Mutex<Vec<Generation>>,
}

impl std::fmt::Debug for ScriptedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedEngine")
            .field("model", &self.model)
            .field("piece_chars", &self.piece_chars)
            .finish_non_exhaustive()
    }
}

const DEFAULT_PIECE_CHARS: usize = 4;

impl ScriptedEngine {
    /// Plays `outputs` back, one per generation, in order. A generation after the last
    /// is an [`EngineErrorKind::Backend`].
    pub fn new(model: ModelInfo, outputs: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let outputs = outputs.into_iter().map(Into::into).collect();
        Self::with_script(model, Script::Outputs(Mutex::new(outputs)))
    }

    /// Generates `script(generation)` for every generation.
    pub fn from_fn(
        model: ModelInfo,
        script: impl Fn(&Generation) -> String + Send + Sync + 'static,
    ) -> Self {
        Self::with_script(model, Script::Function(Box::new(script)))
    }

    fn with_script(model: ModelInfo, script: Script) -> Self {
        Self {
            model,
            script,
            piece_chars: DEFAULT_PIECE_CHARS,
            piece_delay: Duration::ZERO,
            received: Mutex::new(Vec::new()),
        }
    }

    /// Streams (and counts tokens) in pieces of `chars` characters; 0 counts as 1.
    pub fn with_piece_chars(mut self, chars: usize) -> Self {
        self.piece_chars = chars.max(1);
        self
    }

    /// Waits `delay` before each piece, as a model takes time per token.
    pub fn with_piece_delay(mut self, delay: Duration) -> Self {
        self.piece_delay = delay;
        self
    }

    /// Every generation asked of this engine so far, oldest first.
    pub fn generations(&self) -> Vec<Generation> {
        lock(&self.received).clone()
    }

    fn next_output(&self, generation: &Generation) -> Result<String, EngineError> {
        match &self.script {
            Script::Outputs(outputs) => lock(outputs).pop_front().ok_or_else(|| {
                EngineError::new(
                    EngineErrorKind::Backend,
                    "the scripted engine has no outputs left",
                )
            }),
            Script::Function(script) => Ok(script(generation)),
        }
    }

    /// Records `generation` and returns how many of its prompt's leading pieces the
    /// previous prompt shared (what a real engine would find in its cache).
    fn record(&self, generation: &Generation) -> usize {
        let mut received = lock(&self.received);
        let cached = received.last().map_or(0, |previous| {
            let old = pieces(&previous.prompt, self.piece_chars);
            let new = pieces(&generation.prompt, self.piece_chars);
            old.iter().zip(&new).take_while(|(a, b)| a == b).count()
        });
        received.push(generation.clone());
        cached
    }
}

impl Engine for ScriptedEngine {
    fn model(&self) -> &ModelInfo {
        &self.model
    }

    fn generate(
        &self,
        generation: &Generation,
        on_piece: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Completion, EngineError> {
        let started = Instant::now();
        let cached = self.record(generation);
        let output = self.next_output(generation)?;
        let plan = Plan::new(&output, generation, self.piece_chars);
        if let Some(constraint) = &generation.constraint {
            check(constraint, &plan)?;
        }
        let prompt_tokens = pieces(&generation.prompt, self.piece_chars).len();
        let mut usage = Usage {
            prompt_tokens: saturate(prompt_tokens),
            completion_tokens: 0,
            cached_tokens: saturate(cached),
        };
        let mut first_piece_ms = None;
        let mut finish_reason = plan.finish_reason;
        for (token, released) in plan.released.iter().enumerate() {
            usage.completion_tokens = saturate(token + 1);
            if !self.piece_delay.is_zero() {
                std::thread::sleep(self.piece_delay);
            }
            if released.is_empty() {
                continue;
            }
            first_piece_ms.get_or_insert_with(|| millis_since(started));
            if on_piece(released) == Flow::Stop {
                finish_reason = FinishReason::Cancelled;
                break;
            }
        }
        Ok(Completion {
            finish_reason,
            usage,
            timings: Timings {
                first_piece_ms: first_piece_ms.unwrap_or_default(),
                generation_ms: millis_since(started),
                ..Timings::default()
            },
        })
    }
}

/// The output as the engine will release it: one entry per token (possibly empty while
/// a stop string might be starting), and why it ends.
struct Plan {
    released: Vec<String>,
    finish_reason: FinishReason,
    /// The output ran to its end: no stop string, no `max_tokens` cut it.
    whole: bool,
}

impl Plan {
    fn new(output: &str, generation: &Generation, piece_chars: usize) -> Self {
        let tokens = pieces(output, piece_chars);
        let limit = generation
            .sampling
            .max_tokens
            .map_or(usize::MAX, |max| max as usize);
        let mut stops = StopMatcher::new(&generation.stop);
        let mut released = Vec::new();
        for token in tokens.iter().take(limit) {
            let step = stops.push(token.as_bytes());
            released.push(step.text);
            if step.stopped {
                return Self {
                    released,
                    finish_reason: FinishReason::Stop,
                    whole: false,
                };
            }
        }
        let cut_by_limit = tokens.len() > limit;
        let rest = stops.finish();
        match released.last_mut() {
            Some(last) => last.push_str(&rest),
            None => released.push(rest),
        }
        Self {
            released,
            finish_reason: if cut_by_limit {
                FinishReason::Length
            } else {
                FinishReason::Stop
            },
            whole: !cut_by_limit,
        }
    }
}

/// Compiles the constraint (an error if llguidance refuses it) and, when the output ran
/// to its end, requires the grammar to accept it.
fn check(constraint: &Constraint, plan: &Plan) -> Result<(), EngineError> {
    let validator = Validator::from_lark(constraint.lark())
        .map_err(|error| constraint_error("").with_source(error))?;
    let output = plan.released.concat();
    if plan.whole && !validator.accepts(&output) {
        return Err(constraint_error(format!(
            "the scripted output is not in the constraint's language: {output:?}"
        )));
    }
    Ok(())
}

/// `text` cut into pieces of `chars` characters (the last may be shorter).
fn pieces(text: &str, chars: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest
            .char_indices()
            .nth(chars)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        out.push(piece);
        rest = tail;
    }
    out
}

fn saturate(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}

fn millis_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sampling;
    use proptest::prelude::*;
    use toolbridge_grammar::{Expr, Grammar, Trigger};

    fn model() -> ModelInfo {
        ModelInfo {
            id: "scripted".into(),
            context_length: 4096,
            ..ModelInfo::default()
        }
    }

    fn prompt(text: &str) -> Generation {
        Generation {
            prompt: text.into(),
            ..Generation::default()
        }
    }

    /// Runs a generation and returns the pieces and the completion.
    fn collect(
        engine: &ScriptedEngine,
        generation: &Generation,
    ) -> Result<(Vec<String>, Completion), EngineError> {
        let mut pieces = Vec::new();
        let completion = engine.generate(generation, &mut |piece| {
            pieces.push(piece.to_string());
            Flow::Continue
        })?;
        Ok((pieces, completion))
    }

    /// `<tool_call>{"name":"f"}</tool_call>`, lazy on `<tool_call>` or forced.
    fn tool_call_constraint(lazy: bool) -> Constraint {
        let mut grammar = Grammar::new("root");
        grammar.set_rule(
            "root",
            Expr::Seq(vec![
                Expr::literal("<tool_call>"),
                Expr::Json(serde_json::json!({
                    "type": "object",
                    "properties": {"name": {"const": "f"}},
                    "required": ["name"],
                })),
                Expr::literal("</tool_call>"),
            ]),
        );
        Constraint::new(grammar, vec![Trigger::Word("<tool_call>".into())], lazy)
    }

    #[test]
    fn streams_the_script_in_pieces_and_counts_them_as_tokens() {
        let engine = ScriptedEngine::new(model(), ["Hello, world"]).with_piece_chars(5);
        let (pieces, completion) = collect(&engine, &prompt("0123456789")).unwrap();
        assert_eq!(pieces, ["Hello", ", wor", "ld"]);
        assert_eq!(completion.finish_reason, FinishReason::Stop);
        assert_eq!(
            completion.usage,
            Usage {
                prompt_tokens: 2,
                completion_tokens: 3,
                cached_tokens: 0
            }
        );
    }

    #[test]
    fn outputs_are_played_in_order_then_run_out() {
        let engine = ScriptedEngine::new(model(), ["one", "two"]);
        for expected in ["one", "two"] {
            let (pieces, _) = collect(&engine, &prompt("p")).unwrap();
            assert_eq!(pieces.concat(), expected);
        }
        let error = collect(&engine, &prompt("p")).unwrap_err();
        assert!(matches!(error.kind(), EngineErrorKind::Backend), "{error}");
    }

    #[test]
    fn a_script_function_sees_the_generation() {
        let engine = ScriptedEngine::from_fn(model(), |g| format!("echo: {}", g.prompt));
        let (pieces, _) = collect(&engine, &prompt("hi")).unwrap();
        assert_eq!(pieces.concat(), "echo: hi");
    }

    #[test]
    fn stop_strings_cut_the_output() {
        let engine = ScriptedEngine::new(model(), ["answer<|end|>ignored"]).with_piece_chars(3);
        let generation = Generation {
            stop: vec!["<|end|>".into()],
            ..prompt("p")
        };
        let (pieces, completion) = collect(&engine, &generation).unwrap();
        assert_eq!(pieces.concat(), "answer");
        assert_eq!(completion.finish_reason, FinishReason::Stop);
        assert_eq!(completion.usage.completion_tokens, 5);
    }

    #[test]
    fn max_tokens_ends_with_length() {
        let engine = ScriptedEngine::new(model(), ["abcdefgh"]).with_piece_chars(2);
        let generation = Generation {
            sampling: Sampling {
                max_tokens: Some(3),
                ..Sampling::default()
            },
            ..prompt("p")
        };
        let (pieces, completion) = collect(&engine, &generation).unwrap();
        assert_eq!(pieces.concat(), "abcdef");
        assert_eq!(completion.finish_reason, FinishReason::Length);
        assert_eq!(completion.usage.completion_tokens, 3);
    }

    #[test]
    fn flow_stop_cancels() {
        let engine = ScriptedEngine::new(model(), ["abcdefgh"]).with_piece_chars(2);
        let mut seen = Vec::new();
        let completion = engine
            .generate(&prompt("p"), &mut |piece| {
                seen.push(piece.to_string());
                Flow::Stop
            })
            .unwrap();
        assert_eq!(seen, ["ab"]);
        assert_eq!(completion.finish_reason, FinishReason::Cancelled);
        assert_eq!(completion.usage.completion_tokens, 1);
    }

    #[test]
    fn records_generations_and_reports_a_shared_prompt_prefix_as_cached() {
        let engine = ScriptedEngine::new(model(), ["a", "b"]).with_piece_chars(2);
        collect(&engine, &prompt("system:user")).unwrap();
        let (_, completion) = collect(&engine, &prompt("system:other")).unwrap();
        assert_eq!(completion.usage.cached_tokens, 3);
        let prompts: Vec<String> = engine.generations().into_iter().map(|g| g.prompt).collect();
        assert_eq!(prompts, ["system:user", "system:other"]);
    }

    #[test]
    fn output_in_the_constraints_language_passes() {
        let engine = ScriptedEngine::new(
            model(),
            ["Sure.<tool_call>{\"name\":\"f\"}</tool_call>", "No call."],
        );
        for _ in 0..2 {
            let generation = Generation {
                constraint: Some(tool_call_constraint(true)),
                ..prompt("p")
            };
            collect(&engine, &generation).unwrap();
        }
        assert!(engine.generations()[0].constraint.is_some());
    }

    #[test]
    fn output_outside_the_constraints_language_is_a_constraint_error() {
        let cases = [
            (true, "Sure.<tool_call>{\"name\":\"g\"}</tool_call>"),
            (false, "No call."),
        ];
        for (lazy, output) in cases {
            let engine = ScriptedEngine::new(model(), [output]);
            let generation = Generation {
                constraint: Some(tool_call_constraint(lazy)),
                ..prompt("p")
            };
            let error = collect(&engine, &generation).unwrap_err();
            assert!(
                matches!(error.kind(), EngineErrorKind::Constraint),
                "{error}"
            );
        }
    }

    #[test]
    fn an_uncompilable_constraint_is_a_constraint_error() {
        let mut grammar = Grammar::new("root");
        grammar.set_rule("root", Expr::reference("missing"));
        let generation = Generation {
            constraint: Some(Constraint::new(grammar, Vec::new(), false)),
            ..prompt("p")
        };
        let engine = ScriptedEngine::new(model(), ["x"]);
        let error = collect(&engine, &generation).unwrap_err();
        assert!(
            matches!(error.kind(), EngineErrorKind::Constraint),
            "{error}"
        );
    }

    proptest! {
        #[test]
        fn pieces_join_to_the_output_up_to_the_first_stop(
            output in "[a-c<>é😀]{0,30}",
            stop in "[a-c<>é]{1,3}",
            piece_chars in 0usize..6,
        ) {
            let engine = ScriptedEngine::new(model(), [output.clone()]).with_piece_chars(piece_chars);
            let generation = Generation { stop: vec![stop.clone()], ..prompt("p") };
            let (pieces, _) = collect(&engine, &generation).unwrap();
            let expected = output.find(&stop).map_or(output.as_str(), |i| &output[..i]);
            prop_assert_eq!(pieces.concat(), expected);
            prop_assert!(pieces.iter().all(|p| !p.is_empty()));
        }
    }
}
