//! `toolbridge serve --engine URL` in front of real llama.cpp servers (llama.cpp's own
//! server, from the `xllamacpp` wheel: `scripts/llama-server.sh`), on the default model.
//!
//! - The OpenAI SDK checks that the embedded engine passes (`openai_e2e.py`: a call
//!   streamed and not, identical; `required` and named calls forced and valid; `none`;
//!   `response_format`; two turns; errors) pass the same through toolbridge →
//!   llama-server.
//! - Two replicas: a conversation's second turn lands on the replica that served its
//!   first (its whole first prompt comes from that replica's cache), while another
//!   conversation is served in between; a client that goes away frees its replica's
//!   slot; with the replica of a stream in flight killed,
//!   the stream ends with an error event, not a hang, and new requests succeed on the
//!   other replica.
//!
//! The tests share two cores, so they take turns with the other tests on the real model
//! ([`one_at_a_time`]). Like them they are built with the `llama` feature
//! (`scripts/test.sh`).

#![cfg(feature = "llama")]

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::one_at_a_time;
use crate::common::serve::{assert_openai_checks_pass, weather_tool, LlamaServer, ServeProcess};

/// Tokens of context per llama-server slot: a conversation of these tests fits.
const CONTEXT: usize = 4096;

#[test]
fn the_openai_sdk_checks_pass_through_llama_server() {
    let _turn = one_at_a_time();
    let upstream = LlamaServer::start(1, CONTEXT);
    let server = ServeProcess::start(&["--engine", &upstream.base_url], &[]);
    assert_openai_checks_pass(&server);
}

#[test]
fn replicas_keep_conversations_and_survive_a_crash() {
    let _turn = one_at_a_time();
    let mut replicas = [
        LlamaServer::start(1, CONTEXT),
        LlamaServer::start(1, CONTEXT),
    ];
    let server = ServeProcess::start(
        &[
            "--engine",
            &replicas[0].base_url,
            "--engine",
            &replicas[1].base_url,
        ],
        &[],
    );
    let chat = format!("{}/v1/chat/completions", server.base_url);

    // Two conversations, their turns interleaved: each second turn must find its whole
    // first prompt in cache, which only the replica that served the first turn has.
    let questions = [
        "What is the weather like in Paris today?",
        "Is it raining in Tokyo right now?",
    ];
    let firsts: Vec<(Vec<Value>, Value)> = questions
        .iter()
        .map(|question| {
            let messages = vec![json!({"role": "user", "content": question})];
            let answer = post(&chat, &weather_request(&messages));
            (messages, answer)
        })
        .collect();
    for (mut messages, first) in firsts {
        let first_prompt = first["usage"]["prompt_tokens"].as_u64().expect("usage");
        let message = first["choices"][0]["message"].clone();
        let call_id = message["tool_calls"][0]["id"]
            .as_str()
            .expect("a call")
            .to_owned();
        messages.push(message);
        messages.push(
            json!({"role": "tool", "tool_call_id": call_id, "content": "{\"sky\": \"clear\"}"}),
        );
        let second = post(&chat, &weather_request(&messages));
        let cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .expect("cached tokens reported");
        println!("first prompt {first_prompt} tokens; second turn: {cached} cached");
        assert!(
            cached + 1 >= first_prompt,
            "the second turn reused {cached} cached tokens of the first's {first_prompt}: another replica served it"
        );
    }

    // A client that goes away frees the replica's slot.
    let stream = open_stream(&chat);
    assert!(
        busy_replica(&replicas).is_some(),
        "the stream is generating"
    );
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(10);
    while busy_replica(&replicas).is_some() {
        assert!(
            Instant::now() < deadline,
            "the upstream generation outlived its client"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A stream in flight on a replica that dies ends with an error event.
    let mut stream = open_stream(&chat);
    let served_by = busy_replica(&replicas).expect("one replica is generating the stream");
    replicas[served_by].kill();
    let started = Instant::now();
    let ending = read_to_end(&mut stream);
    println!(
        "after the kill, the stream ended in {:?}: {ending}",
        started.elapsed()
    );
    assert!(
        ending.contains("\"error\""),
        "the stream ended without an error event: {ending}"
    );

    // New requests succeed on the replica left.
    for question in questions {
        let messages = vec![json!({"role": "user", "content": question})];
        let answer = post(&chat, &weather_request(&messages));
        assert_eq!(
            answer["choices"][0]["finish_reason"], "tool_calls",
            "{answer}"
        );
    }
}

fn weather_request(messages: &[Value]) -> Value {
    json!({
        "model": "default",
        "messages": messages,
        "temperature": 0,
        "max_tokens": 100,
        "tool_choice": "required",
        "tools": [weather_tool()]
    })
}

fn post(url: &str, body: &Value) -> Value {
    match ureq::post(url)
        .timeout(Duration::from_secs(300))
        .send_json(body)
    {
        Ok(response) => response.into_json().expect("a JSON answer"),
        Err(ureq::Error::Status(status, response)) => {
            panic!("{status}: {}", response.into_string().unwrap_or_default())
        }
        Err(error) => panic!("{url}: {error}"),
    }
}

/// A streamed answer long enough to be killed in the middle of, once its first chunk
/// has come.
fn open_stream(url: &str) -> BufReader<Box<dyn std::io::Read + Send + Sync>> {
    let body = json!({
        "model": "default",
        "messages": [{"role": "user", "content": "Write a very long story about a lighthouse keeper."}],
        "max_tokens": 2000,
        "stream": true,
    });
    let response = ureq::post(url)
        .timeout(Duration::from_secs(300))
        .send_json(body)
        .expect("the stream starts");
    let mut reader = BufReader::new(response.into_reader());
    let mut line = String::new();
    while !line.starts_with("data: {") {
        line.clear();
        reader.read_line(&mut line).expect("a first chunk");
    }
    reader
}

/// The replica whose slot is processing, by its `/slots`.
fn busy_replica(replicas: &[LlamaServer]) -> Option<usize> {
    replicas.iter().position(|replica| {
        let slots: Value = ureq::get(&format!("{}/slots", replica.base_url))
            .call()
            .ok()
            .and_then(|response| response.into_json().ok())
            .unwrap_or(Value::Null);
        slots
            .as_array()
            .is_some_and(|slots| slots.iter().any(|slot| slot["is_processing"] == true))
    })
}

/// The stream's last line before it closed.
fn read_to_end(reader: &mut impl BufRead) -> String {
    let mut last = String::new();
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|read| read > 0) {
        if !line.trim().is_empty() {
            last = line.trim().to_owned();
        }
        line.clear();
    }
    last
}
