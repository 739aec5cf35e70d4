//! The kinds of server toolbridge stands in front of, and the one place a backend is
//! chosen by kind ([`EngineKind::backend`]). It sits above the backends: they implement
//! [`Backend`] without knowing the kinds, so adding a kind touches this file and its own.

use std::fmt;
use std::str::FromStr;

use super::http::Http;
use super::llama_server::LlamaServer;
use super::ollama::Ollama;
use super::protocol::Backend;
use super::sglang::Sglang;
use super::vllm::Vllm;
use crate::{EngineError, EngineErrorKind};

/// The kinds of remote engine toolbridge can stand in front of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// llama.cpp's `llama-server` (`/completion`, GBNF with lazy triggers).
    LlamaServer,
    /// vLLM's OpenAI server (`/v1/completions`, structured outputs).
    Vllm,
    /// SGLang's native `/generate`.
    Sglang,
    /// Ollama's `/api/generate` in raw mode.
    Ollama,
}

impl EngineKind {
    pub const ALL: [EngineKind; 4] = [
        EngineKind::LlamaServer,
        EngineKind::Vllm,
        EngineKind::Sglang,
        EngineKind::Ollama,
    ];

    /// The name used on the command line (`--engine-kind`).
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::LlamaServer => "llama-server",
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Ollama => "ollama",
        }
    }

    /// The wire protocol of this kind's servers.
    pub(crate) fn backend(self) -> &'static dyn Backend {
        match self {
            EngineKind::LlamaServer => &LlamaServer,
            EngineKind::Vllm => &Vllm,
            EngineKind::Sglang => &Sglang,
            EngineKind::Ollama => &Ollama,
        }
    }

    /// The kind of server at `base`, from the endpoints only it answers; the probes run in
    /// an order where no kind's probe is answered by a kind tried later.
    pub(crate) async fn detect(http: &Http, base: &str) -> Result<EngineKind, EngineError> {
        for kind in [
            EngineKind::LlamaServer,
            EngineKind::Ollama,
            EngineKind::Sglang,
            EngineKind::Vllm,
        ] {
            if kind.backend().answers(http, base).await? {
                return Ok(kind);
            }
        }
        Err(EngineError::new(
            EngineErrorKind::Unavailable,
            format!(
                "{base} does not answer as llama-server (/props), Ollama (/api/version), SGLang \
             (/model_info) or vLLM (/v1/models): is it running, and is it one of these? \
             (--engine-kind names the kind)"
            ),
        ))
    }

    /// What this kind cannot enforce, said at start-up.
    pub fn limitation(self) -> Option<&'static str> {
        self.backend().limitation()
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EngineKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let wanted = name.to_ascii_lowercase().replace('_', "-");
        EngineKind::ALL
            .into_iter()
            .find(|kind| {
                kind.name() == wanted || (wanted == "llama.cpp" && *kind == EngineKind::LlamaServer)
            })
            .ok_or_else(|| {
                format!("unknown engine kind {name:?}; known: llama-server, vllm, sglang, ollama")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_by_their_names() {
        for kind in EngineKind::ALL {
            assert_eq!(kind.name().parse::<EngineKind>(), Ok(kind));
        }
        assert_eq!(
            "LLAMA_SERVER".parse::<EngineKind>(),
            Ok(EngineKind::LlamaServer)
        );
        assert!("tgi".parse::<EngineKind>().unwrap_err().contains("vllm"));
    }
}
