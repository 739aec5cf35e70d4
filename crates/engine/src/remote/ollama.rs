//! (being written)

use super::http::Http;
use super::protocol::{Description, Ending, Reader, Target, Update, WireRequest};
use crate::{EngineError, Generation};

pub(crate) const HEALTH: &str = "/health";

pub(crate) async fn answers(_http: &Http, _base: &str) -> bool {
    false
}

pub(crate) async fn describe(_http: &Http, base: &str, _model: Option<&str>) -> Result<Description, EngineError> {
    Err(EngineError::Unavailable(format!("{base}: not yet supported")))
}

pub(crate) fn request(_generation: &Generation, _target: &Target) -> Result<WireRequest, EngineError> {
    Err(EngineError::Unavailable("not yet supported".into()))
}

pub(crate) fn refusal(_status: u16, _body: &str) -> Option<EngineError> {
    None
}

#[derive(Debug, Default)]
pub(crate) struct StreamReader;

impl Reader for StreamReader {
    fn frame(&mut self, _frame: &str) -> Result<Vec<Update>, EngineError> {
        Ok(Vec::new())
    }

    fn closed(&mut self) -> Result<Ending, EngineError> {
        Ok(Ending::stopped())
    }
}
pub(crate) const LIMITATION: &str = "Ollama takes no grammar: tool calls are parsed, not constrained";

pub(crate) fn unenforced(generation: &Generation) -> Option<&'static str> {
    generation.constraint.as_ref().map(|_| LIMITATION)
}
