//! GGUF metadata from any bytes, read as `TemplateSource` reads a model file (only the
//! token list held) and with every array held: a truncated or lying file is an error,
//! never a panic or an allocation its bytes do not back.

use toolbridge_template::gguf::{GgufMetadata, ReadOptions, TOKENS_KEY};

pub fn gguf(data: &[u8]) {
    for options in [
        ReadOptions::keep_only_arrays([TOKENS_KEY]),
        ReadOptions::default(),
    ] {
        if let Ok(metadata) = GgufMetadata::from_reader(data, &options) {
            let templates = metadata.chat_templates();
            let tokens = [metadata.bos_token(), metadata.eos_token()];
            let entries = metadata.entries().count();
            std::hint::black_box((templates.default, templates.named, tokens, entries));
        }
    }
}
