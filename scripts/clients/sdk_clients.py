"""The Python agent clients of `scripts/clients.sh`, each running the same task against
toolbridge: answer "what is the weather in Paris" with the `get_weather` tool
(`weather.py`), the client's own tool loop calling it and sending its result back.

    python sdk_clients.py CLIENT BASE_URL API_KEY MODEL
    python sdk_clients.py --list        # the clients' names

BASE_URL is the server's root (`http://127.0.0.1:PORT`); each client is given the URL its
SDK expects (`/v1` for OpenAI's, the root for Anthropic's). The script runs in the folder
where the tool leaves its record, prints the final answer, and exits 1 with the traceback
when the client raised — or 3 when it raised its own verdict on the model's answers
(`MODEL_GAVE_UP`: too many turns of calls, an empty answer retried too often), which
the wire carried intact: the driver reads the server's log for the wire and the record for
the tool, so a small model that answers without the tool is not mistaken for a wire fault.

Each client is used as its documentation shows, with nothing toolbridge-specific beyond
the base URL, the key and the model name.
"""

import sys
import traceback

from weather import get_weather

# The SDKs' exceptions for a model that answered well-formed but unhelpfully: the Agents
# SDK's turn limit (the model calls the tool again and again) and pydantic-ai's give-up
# after an answer with neither text nor a call.
MODEL_GAVE_UP = {"MaxTurnsExceeded", "UnexpectedModelBehavior"}

QUESTION = "What is the weather like in Paris today? Use the get_weather tool."
INSTRUCTIONS = "You are a helpful assistant. Answer with the tools you are given."


def openai_agents(base, key, model, api):
    """OpenAI Agents SDK: `Runner.run_sync` over Chat Completions or Responses."""
    import agents
    from openai import AsyncOpenAI

    agents.set_tracing_disabled(True)  # its exporter would post traces to OpenAI
    client = AsyncOpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    kinds = {
        "chat": agents.OpenAIChatCompletionsModel,
        "responses": agents.OpenAIResponsesModel,
    }
    agent = agents.Agent(
        name="weather",
        instructions=INSTRUCTIONS,
        tools=[agents.function_tool(get_weather)],
        model=kinds[api](model=model, openai_client=client),
    )
    return agents.Runner.run_sync(agent, QUESTION, max_turns=4).final_output


def pydantic_ai(base, key, model, api):
    """pydantic-ai: `Agent.run_sync` over Chat Completions, Responses or Messages."""
    from pydantic_ai import Agent

    if api == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        chosen = AnthropicModel(model, provider=AnthropicProvider(base_url=base, api_key=key))
    else:
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        kind = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
        chosen = kind(model, provider=OpenAIProvider(base_url=f"{base}/v1", api_key=key))
    agent = Agent(chosen, instructions=INSTRUCTIONS, tools=[get_weather])
    return agent.run_sync(QUESTION).output


def langchain(base, key, model, api):
    """langchain-openai: `bind_tools`, the calls run and their results sent back by hand,
    as LangChain's tool-calling guide does; whole answers, streamed ones, or Responses."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        model=model,
        base_url=f"{base}/v1",
        api_key=key,
        max_retries=0,
        use_responses_api=api == "responses",
    )
    weather = tool(get_weather)
    bound = chat.bind_tools([weather])

    def ask(messages):
        if api != "stream":
            return bound.invoke(messages)
        answer = None
        for chunk in bound.stream(messages):
            answer = chunk if answer is None else answer + chunk
        return answer

    messages = [SystemMessage(INSTRUCTIONS), HumanMessage(QUESTION)]
    for _ in range(3):
        answer = ask(messages)
        messages.append(answer)
        if not answer.tool_calls:
            return answer.text
        messages.extend(weather.invoke(call) for call in answer.tool_calls)
    return messages[-1].content


def anthropic_tool_runner(base, key, model, _api):
    """Anthropic SDK: `client.beta.messages.tool_runner`, which runs the tools itself."""
    import anthropic

    client = anthropic.Anthropic(base_url=base, api_key=key, max_retries=0)
    runner = client.beta.messages.tool_runner(
        model=model,
        max_tokens=512,
        system=INSTRUCTIONS,
        tools=[anthropic.beta_tool(get_weather)],
        messages=[{"role": "user", "content": QUESTION}],
        max_iterations=4,
    )
    last = None
    for message in runner:
        last = message
    return "".join(block.text for block in last.content if block.type == "text")


CLIENTS = {
    "agents-chat": (openai_agents, "chat"),
    "agents-responses": (openai_agents, "responses"),
    "pydantic-ai-chat": (pydantic_ai, "chat"),
    "pydantic-ai-responses": (pydantic_ai, "responses"),
    "pydantic-ai-anthropic": (pydantic_ai, "anthropic"),
    "langchain": (langchain, "chat"),
    "langchain-stream": (langchain, "stream"),
    "langchain-responses": (langchain, "responses"),
    "anthropic-tool-runner": (anthropic_tool_runner, None),
}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CLIENTS))
        return
    if len(sys.argv) != 5 or sys.argv[1] not in CLIENTS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(CLIENTS)}}} BASE_URL API_KEY MODEL")
    name, base, key, model = sys.argv[1:]
    run, api = CLIENTS[name]
    try:
        answer = run(base.rstrip("/"), key, model, api)
    except Exception as error:  # noqa: BLE001 - the driver records the failure, not a crash
        traceback.print_exc()
        sys.exit(3 if type(error).__name__ in MODEL_GAVE_UP else 1)
    print(answer)


if __name__ == "__main__":
    main()
