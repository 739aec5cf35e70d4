//! The dialects by name, so a user (or detection) can pick one with a string such as
//! `hermes`. A dialect may answer to aliases too (`qwen2.5`), the names users know the
//! family by; [`Registry::names`] lists only the canonical names, once each.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::dialect::Dialect;
use crate::dialects::cohere::{Cohere, CommandR7b};
use crate::dialects::deepseek::DeepSeek;
use crate::dialects::firefunction;
use crate::dialects::functionary::{FunctionaryV31, FunctionaryV32};
use crate::dialects::gemma_calls::GemmaCalls;
use crate::dialects::gigachat::GigaChat;
use crate::dialects::glm4::Glm4;
use crate::dialects::gpt_oss::GptOss;
use crate::dialects::hermes_dialect::Hermes;
use crate::dialects::json_list::{
    APERTUS, APRIEL, COGITO, FIREFUNCTION_V1, GRANITE, GRANITE_20B_FC, HUNYUAN, INTERNLM2, JAMBA,
    MINIMAX_M1, NEMOTRON, NEMOTRON_MINI, PHI4_MINI, XLAM,
};
use crate::dialects::kimi::KimiK2;
use crate::dialects::lfm2::Lfm2;
use crate::dialects::llama3::{Llama3Json, Llama3Pythonic};
use crate::dialects::minicpm3::MiniCpm3;
use crate::dialects::minimax_m3::MiniMaxM3;
use crate::dialects::mistral::Mistral;
use crate::dialects::olmo3::Olmo3;
use crate::dialects::react::React;
use crate::dialects::solar_open::SolarOpen;
use crate::dialects::styles::{functionary_v2, hermes_2_pro, long, short, thoughtful_steps};
use crate::dialects::xml_calls::XmlCalls;
use crate::toolkit::native::NativeDialect;

/// Dialects by name and alias.
pub struct Registry {
    by_name: BTreeMap<&'static str, Arc<dyn Dialect>>,
    canonical: Vec<&'static str>,
}

impl Default for Registry {
    /// Every dialect this crate has.
    fn default() -> Self {
        let mut registry = Registry {
            by_name: BTreeMap::new(),
            canonical: Vec::new(),
        };
        registry.register(
            Arc::new(NativeDialect(Hermes::Qwen)),
            &["qwen2.5", "ernie4_5"],
        );
        registry.register(Arc::new(NativeDialect(Hermes::LongCat)), &[]);
        registry.register(
            Arc::new(NativeDialect(Llama3Json)),
            &["llama3.1", "llama3.2", "llama3.3"],
        );
        registry.register(
            Arc::new(NativeDialect(Llama3Pythonic::Llama3)),
            &["llama4_pythonic"],
        );
        registry.register(Arc::new(NativeDialect(Mistral::V3)), &["mistral_nemo"]);
        registry.register(
            Arc::new(firefunction::dialect(Default::default())),
            &["firefunction"],
        );
        registry.register(Arc::new(short::dialect()), &[]);
        registry.register(Arc::new(long::dialect()), &[]);
        registry.register(Arc::new(hermes_2_pro::dialect(Default::default())), &[]);
        registry.register(Arc::new(thoughtful_steps::dialect()), &[]);
        registry.register(Arc::new(long::mixtral()), &[]);
        registry.register(Arc::new(functionary_v2::dialect()), &[]);
        registry.register(Arc::new(NativeDialect(Cohere)), &["command_r", "aya"]);
        registry.register(Arc::new(NativeDialect(CommandR7b)), &["command_a"]);
        registry.register(Arc::new(NativeDialect(React)), &[]);
        registry.register(Arc::new(NativeDialect(DeepSeek::R1)), &[]);
        registry.register(Arc::new(NativeDialect(DeepSeek::V3)), &["deepseek_v2_5"]);
        registry.register(Arc::new(NativeDialect(DeepSeek::V3_1)), &[]);
        registry.register(Arc::new(NativeDialect(GRANITE)), &[]);
        registry.register(Arc::new(NativeDialect(PHI4_MINI)), &[]);
        registry.register(Arc::new(NativeDialect(XLAM)), &["hammer"]);
        registry.register(Arc::new(NativeDialect(NEMOTRON)), &[]);
        registry.register(Arc::new(NativeDialect(APRIEL)), &[]);
        registry.register(Arc::new(NativeDialect(MINIMAX_M1)), &[]);
        registry.register(Arc::new(NativeDialect(APERTUS)), &[]);
        registry.register(Arc::new(NativeDialect(GRANITE_20B_FC)), &[]);
        registry.register(Arc::new(NativeDialect(INTERNLM2)), &[]);
        registry.register(Arc::new(NativeDialect(NEMOTRON_MINI)), &[]);
        registry.register(Arc::new(NativeDialect(MiniCpm3)), &[]);
        registry.register(Arc::new(NativeDialect(JAMBA)), &[]);
        registry.register(Arc::new(NativeDialect(COGITO)), &[]);
        registry.register(Arc::new(NativeDialect(HUNYUAN)), &[]);
        registry.register(Arc::new(NativeDialect(FIREFUNCTION_V1)), &[]);
        registry.register(Arc::new(NativeDialect(KimiK2)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::Qwen3Coder)), &[]);
        registry.register(
            Arc::new(NativeDialect(XmlCalls::Glm)),
            &["glm4.5", "poolside_v1"],
        );
        registry.register(Arc::new(NativeDialect(Glm4)), &["chatglm4"]);
        registry.register(Arc::new(NativeDialect(XmlCalls::Ling)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::MiniMaxM2)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::Dots)), &[]);
        registry.register(Arc::new(NativeDialect(MiniMaxM3)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::SeedOss)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::DeepSeekV32)), &["dsml"]);
        registry.register(Arc::new(NativeDialect(XmlCalls::DeepSeekV4)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::MiniCpm5)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::MuseGlimmer)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::KimiK3)), &[]);
        registry.register(Arc::new(NativeDialect(XmlCalls::Hy3)), &["hunyuan_v3"]);
        registry.register(Arc::new(NativeDialect(XmlCalls::Step3)), &["step_3"]);
        registry.register(Arc::new(NativeDialect(XmlCalls::K2Horizon)), &[]);
        registry.register(Arc::new(NativeDialect(Lfm2)), &["lfm2.5"]);
        registry.register(Arc::new(NativeDialect(Olmo3)), &[]);
        registry.register(Arc::new(NativeDialect(Llama3Pythonic::Gemma3)), &[]);
        registry.register(Arc::new(NativeDialect(GemmaCalls::Gemma4)), &[]);
        registry.register(Arc::new(NativeDialect(GemmaCalls::FunctionGemma)), &[]);
        registry.register(Arc::new(NativeDialect(SolarOpen)), &[]);
        registry.register(Arc::new(NativeDialect(GigaChat)), &[]);
        registry.register(Arc::new(NativeDialect(GptOss::OpenAi)), &["harmony"]);
        registry.register(Arc::new(NativeDialect(GptOss::LlmJp)), &[]);
        registry.register(Arc::new(NativeDialect(FunctionaryV31)), &[]);
        registry.register(
            Arc::new(NativeDialect(FunctionaryV32)),
            &["functionary_v3_2"],
        );
        registry
    }
}

impl Registry {
    /// Adds `dialect` under its own name and `aliases`; a name already taken is taken over.
    pub fn register(&mut self, dialect: Arc<dyn Dialect>, aliases: &[&'static str]) {
        let name = dialect.name();
        if !self.canonical.contains(&name) {
            self.canonical.push(name);
        }
        for key in std::iter::once(name).chain(aliases.iter().copied()) {
            self.by_name.insert(key, Arc::clone(&dialect));
        }
    }

    /// The dialect called `name` (its own name or an alias).
    pub fn get(&self, name: &str) -> Option<&dyn Dialect> {
        self.by_name.get(name).map(|dialect| dialect.as_ref())
    }

    /// The canonical names, in the order they were registered.
    pub fn names(&self) -> &[&'static str] {
        &self.canonical
    }
}
