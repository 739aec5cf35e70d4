"""End-to-end checks of `toolbridge serve`'s `/v1/responses` through the official OpenAI
Python SDK (`client.responses.create` and `client.responses.stream`).

Run by `crates/cli/tests/agent_sdks.rs`, which starts the server on the default model
(Qwen2.5-Coder-0.5B-Instruct) with the API key `sk-e2e` and passes its base URL:

    python responses_e2e.py http://127.0.0.1:PORT/v1

Each check prints `ok NAME` or `FAILED NAME: why`; the exit status is the number of
failures. Greedy sampling (temperature 0) makes the answers repeatable, so a streamed and a
whole answer to one request can be compared exactly; forced calls keep the small model's
tool calls reliable.
"""

import json

import openai
from sdk_checks import run_checks

KEY = "sk-e2e"

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
}

QUESTION = "What is the weather like in Paris today?"


def calls_of(response):
    """The (name, arguments) of a response's function calls."""
    return [(item.name, item.arguments) for item in response.output if item.type == "function_call"]


class Checks:
    def __init__(self, base_url):
        self.client = openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0)
        self.model = self.client.models.list().data[0].id

    def request(self, **request):
        request.setdefault("temperature", 0)
        request.setdefault("max_output_tokens", 60)
        return dict(model=self.model, **request)

    def create(self, **request):
        return self.client.responses.create(**self.request(**request))

    def check_forced_call(self):
        response = self.create(input=QUESTION, tools=[WEATHER], tool_choice="required")
        assert response.status == "completed", response
        (call,) = [item for item in response.output if item.type == "function_call"]
        assert call.name == "get_weather" and call.call_id, call
        assert "paris" in json.loads(call.arguments)["city"].lower(), call
        assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0

    def check_named_call(self):
        choice = {"type": "function", "name": "get_weather"}
        response = self.create(input=QUESTION, tools=[WEATHER], tool_choice=choice)
        assert [name for name, _ in calls_of(response)] == ["get_weather"], response.output

    def check_automatic_call(self):
        response = self.create(input=QUESTION, tools=[WEATHER], instructions="Use the tools.")
        assert response.status == "completed", response
        assert calls_of(response) or response.output_text, response.output

    def check_streamed_call_equals_whole(self):
        request = self.request(input=QUESTION, tools=[WEATHER], tool_choice="required")
        whole = self.client.responses.create(**request)
        deltas, names = {}, []
        with self.client.responses.stream(**request) as stream:
            for event in stream:
                names.append(event.type)
                if event.type == "response.function_call_arguments.delta":
                    deltas[event.output_index] = deltas.get(event.output_index, "") + event.delta
            final = stream.get_final_response()
        assert names[0] == "response.created" and names[-1] == "response.completed", names
        assert calls_of(final) == calls_of(whole), (calls_of(final), calls_of(whole))
        assert [deltas[index] for index in sorted(deltas)] == [a for _, a in calls_of(whole)], deltas

    def check_streamed_text_equals_whole(self):
        request = self.request(input="Say hello in one short sentence.", max_output_tokens=30)
        whole = self.client.responses.create(**request)
        text = ""
        with self.client.responses.stream(**request) as stream:
            for event in stream:
                if event.type == "response.output_text.delta":
                    text += event.delta
                last = event
        assert last.type in ("response.completed", "response.incomplete"), last.type
        assert text == whole.output_text and text, (text, whole.output_text)

    def check_second_turn_with_function_call_output(self):
        first = self.create(input=QUESTION, tools=[WEATHER], tool_choice="required")
        (call,) = [item for item in first.output if item.type == "function_call"]
        history = [
            {"role": "user", "content": QUESTION},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "21 degrees and sunny"},
        ]
        second = self.create(input=history, tools=[WEATHER], tool_choice="none")
        assert second.output_text, second.output
        assert not calls_of(second), second.output

    def check_text_format_json_schema(self):
        schema = {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        }
        text = {"format": {"type": "json_schema", "name": "city", "schema": schema, "strict": True}}
        response = self.create(input="Name a city in France.", text=text)
        assert isinstance(json.loads(response.output_text)["city"], str), response.output

    def check_bad_requests_get_openai_errors(self):
        try:
            self.create(input=QUESTION, previous_response_id="resp_unknown")
            raise AssertionError("a previous_response_id was accepted")
        except openai.BadRequestError as error:
            assert error.status_code == 400, error
            assert error.body["param"] == "previous_response_id", error.body
        try:
            self.create(input=QUESTION, tools=[WEATHER], tool_choice={"type": "function", "name": "nope"})
            raise AssertionError("an unknown tool was accepted")
        except openai.BadRequestError as error:
            assert error.body["type"] == "invalid_request_error", error.body
        wrong = openai.OpenAI(base_url=str(self.client.base_url), api_key="sk-wrong", max_retries=0)
        try:
            wrong.responses.create(model=self.model, input="Hi")
            raise AssertionError("a wrong key was accepted")
        except openai.AuthenticationError as error:
            assert error.status_code == 401, error


if __name__ == "__main__":
    run_checks(Checks)
