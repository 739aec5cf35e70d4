"""End-to-end checks of `toolbridge serve` through the official OpenAI Python SDK.

Run by `crates/cli/tests/openai_sdk.rs`, which starts the server on the default model
(Qwen2.5-Coder-0.5B-Instruct) and passes its base URL:

    python openai_e2e.py http://127.0.0.1:PORT/v1

Each check prints `ok NAME` or `FAILED NAME: why`; the exit status is the number of
failures. Greedy sampling (temperature 0) makes the model's answers repeatable, so the
streamed and the non-streamed answers to one request can be compared exactly.
"""

import json
import urllib.error
import urllib.request

import openai
from sdk_checks import run_checks

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}

TOOLS = [WEATHER, ADD]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
# What opens a call in the default model's dialect (Hermes / Qwen 2.5).
CALL_OPEN = "<tool_call>"
WEATHER_QUESTION = [{"role": "user", "content": "What is the weather like in Paris today?"}]


def conforms(value, schema):
    """Whether `value` follows `schema`, for the keywords these tests' schemas use."""
    kind = schema.get("type")
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "object":
        if not isinstance(value, dict):
            return False
        properties = schema.get("properties", {})
        if any(key not in value for key in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        return all(conforms(value[key], sub) for key, sub in properties.items() if key in value)
    if kind == "array":
        return isinstance(value, list) and all(conforms(item, schema.get("items", {})) for item in value)
    checks = {
        "string": lambda: isinstance(value, str),
        "integer": lambda: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": lambda: isinstance(value, bool),
        None: lambda: True,
    }
    return checks[kind]()


def valid_call(call):
    """The call's name is a declared tool and its arguments follow that tool's schema."""
    assert call.type == "function", call
    assert call.id, call
    schema = SCHEMAS.get(call.function.name)
    assert schema is not None, f"undeclared tool {call.function.name}"
    arguments = json.loads(call.function.arguments)
    assert conforms(arguments, schema), f"{arguments} does not follow {schema}"
    return arguments


class Checks:
    def __init__(self, base_url):
        self.client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
        self.base_url = base_url
        self.model = self.client.models.list().data[0].id

    def create(self, **request):
        request.setdefault("temperature", 0)
        request.setdefault("max_tokens", 200)
        return self.client.chat.completions.create(model=self.model, **request)

    def stream(self, **request):
        """The deltas of a streamed answer reassembled into (content, calls, finish)."""
        content, calls, finish = "", {}, None
        for chunk in self.create(stream=True, **request):
            for choice in chunk.choices:
                delta = choice.delta
                content += delta.content or ""
                for piece in delta.tool_calls or []:
                    call = calls.setdefault(piece.index, {"id": None, "name": "", "arguments": ""})
                    if piece.id:
                        assert call["id"] is None, "the id comes once, with the call's first delta"
                        call["id"] = piece.id
                    if piece.function and piece.function.name:
                        assert not call["name"], "the name comes once, with the call's first delta"
                        call["name"] = piece.function.name
                    if piece.function and piece.function.arguments:
                        call["arguments"] += piece.function.arguments
                finish = choice.finish_reason or finish
        return content, [calls[index] for index in sorted(calls)], finish

    def check_tool_call(self):
        answer = self.create(messages=WEATHER_QUESTION, tools=TOOLS)
        choice = answer.choices[0]
        assert choice.finish_reason == "tool_calls", choice
        (call,) = choice.message.tool_calls
        assert call.function.name == "get_weather", call
        assert "paris" in valid_call(call)["city"].lower(), call
        assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0

    def check_streamed_call_equals_non_streamed(self):
        whole = self.create(messages=WEATHER_QUESTION, tools=TOOLS).choices[0]
        content, calls, finish = self.stream(messages=WEATHER_QUESTION, tools=TOOLS)
        assert finish == whole.finish_reason == "tool_calls", (finish, whole.finish_reason)
        assert content == (whole.message.content or ""), (content, whole.message.content)
        expected = [(c.function.name, c.function.arguments) for c in whole.message.tool_calls]
        assert [(c["name"], c["arguments"]) for c in calls] == expected, (calls, expected)
        assert all(c["id"] and c["id"].startswith("call_") for c in calls), calls

    def check_required_forces_a_call(self):
        answer = self.create(
            messages=[{"role": "user", "content": "Tell me a short joke."}],
            tools=TOOLS,
            tool_choice="required",
        )
        choice = answer.choices[0]
        assert choice.finish_reason == "tool_calls", choice
        assert choice.message.tool_calls, choice
        for call in choice.message.tool_calls:
            valid_call(call)

    def check_named_function_is_called(self):
        answer = self.create(
            messages=[{"role": "user", "content": "What is 17 plus 25?"}],
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "add"}},
        )
        calls = answer.choices[0].message.tool_calls
        assert calls and all(call.function.name == "add" for call in calls), calls
        arguments = valid_call(calls[0])
        assert (arguments["a"], arguments["b"]) in [(17, 25), (25, 17)], arguments

    def check_none_makes_no_call(self):
        answer = self.create(messages=WEATHER_QUESTION, tools=TOOLS, tool_choice="none")
        choice = answer.choices[0]
        assert not choice.message.tool_calls, choice
        assert choice.message.content, choice
        assert choice.finish_reason in ("stop", "length"), choice

    def check_json_schema_answer_validates(self):
        schema = {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "country": {"type": "string"},
                "population_millions": {"type": "number"},
            },
            "required": ["city", "country", "population_millions"],
            "additionalProperties": False,
        }
        answer = self.create(
            messages=[{"role": "user", "content": "Describe Paris: its country and population."}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "city", "schema": schema, "strict": True},
            },
        )
        content = answer.choices[0].message.content
        value = json.loads(content)
        assert conforms(value, schema), value

    def check_tool_result_fed_back(self):
        """The first answer's call and its result go back as history (the SDK's own message
        objects), and the server answers the second turn from the same conversation.

        Qwen2.5-Coder-0.5B, greedy, asks for the weather again rather than reading the
        result (its prompt is Qwen's own format, checked in the server tests), so either
        answer is accepted here: text that uses the result, or a call that is valid. The
        second prompt starts with the first, so the engine reuses its cache.
        """
        messages = list(WEATHER_QUESTION)
        first = self.create(messages=messages, tools=TOOLS).choices[0].message
        (call,) = first.tool_calls
        messages.append(first.model_dump(exclude_none=True))
        messages.append(
            {"role": "tool", "tool_call_id": call.id, "content": '{"temperature_celsius": 21, "sky": "sunny"}'}
        )
        answer = self.create(messages=messages, tools=TOOLS)
        second = answer.choices[0]
        if second.message.tool_calls:
            assert second.finish_reason == "tool_calls", second
            for again in second.message.tool_calls:
                valid_call(again)
        else:
            assert second.finish_reason == "stop", second
            assert "21" in second.message.content, second.message.content
        cached = answer.usage.prompt_tokens_details.cached_tokens
        assert cached > 0, f"the second turn reused no cached prompt: {answer.usage}"

    def check_a_call_cut_by_max_tokens_is_the_call_so_far(self):
        """A forced call cut by `max_tokens` comes back as OpenAI returns it: the call so far,
        its id, name and arguments as written (a prefix of the uncut call's, not repaired),
        with `finish_reason: length`, streamed and not; its markup is never content.

        Greedy sampling writes the same call at every limit, so each limit cuts the one
        uncut call somewhere: before its name is whole (no call, no content), before its
        arguments (`{}`, as Hermes reads a call without them), inside its arguments (the
        call so far), or not at all.
        """
        request = dict(
            messages=WEATHER_QUESTION,
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
        )
        (uncut,) = self.create(**request).choices[0].message.tool_calls
        full = uncut.function.arguments
        cut_inside = []
        for limit in range(1, 30):
            whole = self.create(max_tokens=limit, **request).choices[0]
            content, calls, finish = self.stream(max_tokens=limit, **request)
            if whole.message.content and CALL_OPEN.startswith(whole.message.content):
                # A known gap: a cut inside the opening marker itself reads as text, since
                # the parser cannot tell a half-typed marker from prose at the very end.
                assert content == whole.message.content and not whole.message.tool_calls, (limit, whole)
                assert finish == whole.finish_reason == "length", (limit, whole)
                continue
            assert not whole.message.content and not content, (limit, whole.message, content)
            assert finish == whole.finish_reason, (limit, finish, whole.finish_reason)
            streamed = [(call["name"], call["arguments"]) for call in calls]
            written = [(call.function.name, call.function.arguments) for call in whole.message.tool_calls or []]
            assert streamed == written, (limit, streamed, written)
            if not written:
                assert finish == "length", (limit, whole)
                continue
            ((name, arguments),) = written
            assert name == "get_weather" and whole.message.tool_calls[0].id.startswith("call_"), whole
            if arguments == full:
                break
            assert finish == "length", (limit, whole)
            if arguments == "{}":  # cut before its arguments began: what the dialect reads for none
                continue
            assert full.startswith(arguments), (limit, arguments, full)
            cut_inside.append(arguments)
        assert cut_inside, "no limit cut the call inside its arguments"
        print(f"  cut calls read back: {cut_inside} (uncut: {full})", flush=True)

    def check_bad_requests_are_openai_errors(self):
        def refused(param, **request):
            try:
                self.create(**request)
            except openai.BadRequestError as error:
                assert error.status_code == 400, error
                assert error.body["type"] == "invalid_request_error", error.body
                assert error.body.get("param") == param, (param, error.body)
                return
            raise AssertionError(f"not refused: {request}")

        refused("messages", messages=[])
        refused(
            "tool_choice",
            messages=WEATHER_QUESTION,
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "no_such_tool"}},
        )
        refused("temperature", messages=WEATHER_QUESTION, temperature=7)
        status, body = post_raw(f"{self.base_url}/chat/completions", b"{not json")
        assert status == 400, (status, body)
        assert json.loads(body)["error"]["type"] == "invalid_request_error", body


def post_raw(url, body):
    """POSTs `body` as JSON, returning the status and the response text, errors included."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


if __name__ == "__main__":
    run_checks(Checks)
