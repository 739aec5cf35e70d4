"""End-to-end checks of `toolbridge serve`'s `/v1/messages` through the official Anthropic
Python SDK (`client.messages.create` and `client.messages.stream`, and the tool runner
`client.beta.messages.tool_runner`, whose server-side thread the server refuses).

Run by `crates/cli/tests/agent_sdks.rs`, which starts the server on the default model
(Qwen2.5-Coder-0.5B-Instruct) with the API key `sk-e2e` and passes its base URL:

    python anthropic_e2e.py http://127.0.0.1:PORT/v1

The SDK appends `/v1/messages` itself, so the `/v1` is taken off. Each check prints
`ok NAME` or `FAILED NAME: why`; the exit status is the number of failures. Greedy
sampling (temperature 0, sent in the body) and forced calls (`tool_choice` `any` or a named tool) keep the
small model's answers repeatable.
"""

import json

import anthropic
from sdk_checks import run_checks

KEY = "sk-e2e"

WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
}

QUESTION = [{"role": "user", "content": "What is the weather like in Paris today?"}]


def tool_uses(message):
    """The (name, input) of a message's tool_use blocks."""
    return [(block.name, block.input) for block in message.content if block.type == "tool_use"]


def text_of(message):
    return "".join(block.text for block in message.content if block.type == "text")


class Checks:
    def __init__(self, base_url):
        root = base_url.removesuffix("/v1")
        self.client = anthropic.Anthropic(base_url=root, api_key=KEY, max_retries=0)
        self.root = root
        self.model = "default"

    def request(self, **request):
        # This SDK has no `temperature` argument any more; the API still reads it.
        request.setdefault("extra_body", {"temperature": 0})
        request.setdefault("max_tokens", 60)
        return dict(model=self.model, **request)

    def create(self, **request):
        return self.client.messages.create(**self.request(**request))

    def check_forced_tool_use(self):
        message = self.create(messages=QUESTION, tools=[WEATHER], tool_choice={"type": "any"})
        assert message.stop_reason == "tool_use", message
        (block,) = [block for block in message.content if block.type == "tool_use"]
        assert block.name == "get_weather" and block.id, block
        assert "paris" in block.input["city"].lower(), block
        assert message.usage.input_tokens + (message.usage.cache_read_input_tokens or 0) > 0
        assert message.usage.output_tokens > 0

    def check_named_tool(self):
        choice = {"type": "tool", "name": "get_weather"}
        message = self.create(messages=QUESTION, tools=[WEATHER], tool_choice=choice)
        assert [name for name, _ in tool_uses(message)] == ["get_weather"], message.content

    def check_automatic_tool_use(self):
        message = self.create(messages=QUESTION, tools=[WEATHER], system="Use the tools.")
        assert message.stop_reason in ("tool_use", "end_turn", "max_tokens"), message
        assert tool_uses(message) or text_of(message), message.content

    def check_streamed_tool_use_equals_whole(self):
        request = self.request(messages=QUESTION, tools=[WEATHER], tool_choice={"type": "any"})
        whole = self.client.messages.create(**request)
        names = []
        with self.client.messages.stream(**request) as stream:
            for event in stream:
                names.append(event.type)
            final = stream.get_final_message()
        assert names[0] == "message_start" and "message_stop" in names, names
        assert final.stop_reason == whole.stop_reason == "tool_use", (final.stop_reason, whole.stop_reason)
        assert tool_uses(final) == tool_uses(whole), (tool_uses(final), tool_uses(whole))

    def check_streamed_text_equals_whole(self):
        request = self.request(messages=[{"role": "user", "content": "Say hello in one short sentence."}], max_tokens=30)
        whole = self.client.messages.create(**request)
        with self.client.messages.stream(**request) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
        assert text == text_of(whole) and text, (text, text_of(whole))
        assert final.stop_reason == whole.stop_reason, (final.stop_reason, whole.stop_reason)

    def check_tool_result_turn(self):
        first = self.create(messages=QUESTION, tools=[WEATHER], tool_choice={"type": "any"})
        (block,) = [block for block in first.content if block.type == "tool_use"]
        history = QUESTION + [
            {"role": "assistant", "content": [block.model_dump(include={"type", "id", "name", "input"})]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id, "content": "21 degrees and sunny"}]},
        ]
        second = self.create(messages=history, tools=[WEATHER], tool_choice={"type": "none"})
        assert text_of(second), second.content
        assert not tool_uses(second), second.content

    def check_tool_runner_sends_the_whole_conversation_when_its_thread_is_refused(self):
        # The runner asks for a server-side thread; refused with `thread_unsupported_request`,
        # it goes on without one, sending the whole conversation on every turn.
        cities = []

        @anthropic.beta_tool
        def get_weather(city: str) -> str:
            """Get the current weather in a city.

            Args:
                city: The city name
            """
            cities.append(city)
            return "21 degrees and sunny"

        request = self.request(messages=QUESTION, tools=[get_weather], tool_choice={"type": "any"})
        replies = list(self.client.beta.messages.tool_runner(max_iterations=2, **request))
        assert len(replies) == 2, replies
        assert all(tool_uses(reply) for reply in replies), replies
        assert cities and "paris" in cities[0].lower(), cities

    def check_structured_output(self):
        schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        message = self.create(
            messages=[{"role": "user", "content": "Name a city in France."}],
            output_config={"format": {"type": "json_schema", "schema": schema}},
        )
        assert isinstance(json.loads(text_of(message))["city"], str), message.content

    def check_bad_requests_get_anthropic_errors(self):
        try:
            self.create(messages=[{"role": "tool", "content": "x"}])
            raise AssertionError("a tool turn in messages was accepted")
        except anthropic.BadRequestError as error:
            assert error.status_code == 400, error
            assert error.body["type"] == "error", error.body
            assert error.body["error"]["type"] == "invalid_request_error", error.body
        wrong = anthropic.Anthropic(base_url=self.root, api_key="sk-wrong", max_retries=0)
        try:
            wrong.messages.create(**self.request(messages=QUESTION))
            raise AssertionError("a wrong key was accepted")
        except anthropic.AuthenticationError as error:
            assert error.body["error"]["type"] == "authentication_error", error.body


if __name__ == "__main__":
    run_checks(Checks)
