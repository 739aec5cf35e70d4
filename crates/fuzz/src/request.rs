//! Chat request bodies, as the server reads them (`checks::parse_request`: parse, then
//! validate). Any body parses or fails with a serde error, validation never panics, and a
//! parsed request keeps the chat crate's promise that nothing is lost: it serializes to
//! JSON that parses back to a request serializing the same, and validating the same.

use toolbridge_chat::ChatRequest;

pub fn request(data: &[u8]) {
    let Ok(request) = serde_json::from_slice::<ChatRequest>(data) else {
        return;
    };
    let checked = request.validate();
    let text = serde_json::to_string(&request).expect("a parsed request serializes");
    let again: ChatRequest = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("what a request serializes to does not parse: {e}\n{text}"));
    assert_eq!(serde_json::to_string(&again).ok(), Some(text));
    assert_eq!(again.validate(), checked);
}
