"""The tool of the Python clients' task, and of the `llm` CLI's (`llm --functions FILE`).

Calling it leaves a line in `tool-called.txt` in the working folder: that file is how
`scripts/clients.sh` tells a client that ran the tool from one whose model only wrote
about it. This file holds nothing else, since `llm --functions` turns every function it
defines into a tool.
"""


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    with open("tool-called.txt", "a", encoding="utf-8") as record:
        record.write(f"{city}\n")
    return f"Sunny and 22 degrees Celsius in {city}."
