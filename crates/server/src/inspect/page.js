// The /inspect page: prepares a chat request on the server (POST /inspect/prepare) and
// runs it (POST /inspect/run, server-sent events read from the fetch body, since
// EventSource cannot POST). Plain script, no build step. `?example=NAME&run=1` picks an
// example and runs it on load. `document.body.dataset.state` says where the page is
// (idle, preparing, prepared, running, done, error), for people and for tests.
"use strict";

const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city.",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", description: "The city name" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["city"],
    },
  },
};

const ADD = {
  type: "function",
  function: {
    name: "add",
    description: "Add two integers.",
    parameters: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
    },
  },
};

const EXAMPLES = {
  weather_required: {
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    tools: [WEATHER],
    tool_choice: "required",
    temperature: 0,
    max_tokens: 48,
  },
  weather_auto: {
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    tools: [WEATHER],
    temperature: 0,
    max_tokens: 64,
  },
  two_tools: {
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "What is 17 + 25? Use a tool." },
    ],
    tools: [WEATHER, ADD],
    tool_choice: "auto",
    temperature: 0,
    max_tokens: 64,
  },
  tool_result: {
    messages: [
      { role: "user", content: "What is the weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: "{\"city\": \"Paris\"}" },
        }],
      },
      { role: "tool", tool_call_id: "call_1", content: "{\"temperature\": 21, \"sky\": \"clear\"}" },
    ],
    tools: [WEATHER],
    temperature: 0,
    max_tokens: 48,
  },
  no_tools: {
    messages: [{ role: "user", content: "Say hello in three words." }],
    temperature: 0,
    max_tokens: 24,
  },
};

const $ = (id) => document.getElementById(id);

function setState(state, text, kind) {
  document.body.dataset.state = state;
  $("status").textContent = text || "";
  $("status").dataset.kind = kind || "";
}

function headers() {
  const h = { "content-type": "application/json" };
  const key = $("key").value.trim();
  if (key) h.authorization = "Bearer " + key;
  return h;
}

// The request as typed, or null (and the error shown) when it is not JSON.
function requestBody() {
  try {
    JSON.parse($("request").value);
    return $("request").value;
  } catch (error) {
    setState("error", "the request is not JSON: " + error.message, "error");
    return null;
  }
}

async function failure(response) {
  const text = await response.text();
  try {
    return JSON.parse(text).error.message;
  } catch (_) {
    return response.status + " " + text;
  }
}

let prepared = null;

async function prepare() {
  const body = requestBody();
  if (body === null) return false;
  setState("preparing", "preparing…");
  const response = await fetch("/inspect/prepare", { method: "POST", headers: headers(), body });
  if (!response.ok) {
    setState("error", await failure(response), "error");
    return false;
  }
  prepared = await response.json();
  showPrepared(prepared);
  setState("prepared", "prepared");
  return true;
}

function showPrepared(p) {
  $("model").textContent = p.model;
  $("dialect-name").textContent = p.dialect.name;
  $("why").replaceChildren(...p.dialect.why.map((line) => item(line)));
  const prompt = $("prompt");
  prompt.replaceChildren(...p.prompt_parts.map((part) => {
    if (!part.special) return document.createTextNode(part.text);
    const mark = document.createElement("span");
    mark.className = "special";
    mark.textContent = part.text;
    return mark;
  }));
  prompt.scrollTop = prompt.scrollHeight;
  $("stops").textContent = "stop strings: " + (p.stop.length ? p.stop.map((s) => JSON.stringify(s)).join(" ") : "none") +
    "; max_tokens: " + (p.max_tokens ?? "engine default");
  showGrammar();
}

function showGrammar() {
  const c = prepared && prepared.constraint;
  if (!c) {
    $("grammar-mode").textContent = prepared ? "none: the output is free" : "";
    $("triggers").textContent = "";
    $("grammar").textContent = "";
    return;
  }
  $("grammar-mode").textContent = c.lazy ? "lazy: free text until a trigger" : "forced from the first token";
  const triggers = c.triggers.map((t) => JSON.stringify(t)).join(" ");
  $("triggers").textContent = !c.triggers.length ? "" : (c.lazy ? "triggers: " : "triggers (unused while forced): ") + triggers;
  const notation = document.querySelector("input[name=notation]:checked").value;
  const warnings = c.warnings.map((w) => "# warning: " + w + "\n").join("");
  $("grammar").textContent = notation === "lark" ? c.lark : warnings + (c.gbnf ?? "# " + c.gbnf_error);
}

function item(text, className) {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

function describe(event) {
  switch (event.type) {
    case "content": return "content " + JSON.stringify(event.text);
    case "reasoning": return "reasoning " + JSON.stringify(event.text);
    case "tool_call_start": return "call " + event.index + " starts: " + event.name + (event.id ? " (id " + event.id + ")" : "");
    case "tool_call_arguments": return "call " + event.index + " arguments " + JSON.stringify(event.fragment);
    case "tool_call_end": return "call " + event.index + " ends";
    default: return JSON.stringify(event);
  }
}

async function run() {
  if (!(await prepare())) return;
  $("raw").textContent = "";
  $("events").replaceChildren();
  $("message").textContent = "";
  $("finish").textContent = "";
  setState("running", "running…");
  const response = await fetch("/inspect/run", { method: "POST", headers: headers(), body: requestBody() });
  if (!response.ok) {
    setState("error", await failure(response), "error");
    return;
  }
  await readEvents(response.body, onEvent);
  if (document.body.dataset.state === "running") setState("error", "the stream ended early", "error");
}

function onEvent(name, data) {
  if (name === "raw") {
    $("raw").append(data.text);
  } else if (name === "event") {
    $("events").append(item(describe(data), data.type));
  } else if (name === "done") {
    $("message").textContent = JSON.stringify(data.message, null, 2);
    $("finish").textContent = "finish_reason: " + data.finish_reason +
      ", tokens: " + data.usage.prompt_tokens + " prompt + " + data.usage.completion_tokens + " generated";
    setState("done", "done");
  } else if (name === "error") {
    setState("error", data.error ? data.error.message : JSON.stringify(data), "error");
  }
}

// Reads server-sent events from a byte stream: `event:` names and `data:` lines, each
// event ended by a blank line.
async function readEvents(body, handle) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) handle(name, JSON.parse(data.join("\n")));
    }
  }
}

function pick(name) {
  $("example").value = name;
  $("request").value = JSON.stringify(EXAMPLES[name], null, 2);
}

function guarded(action) {
  return () => action().catch((error) => setState("error", String(error), "error"));
}

function start() {
  for (const name of Object.keys(EXAMPLES)) {
    const option = document.createElement("option");
    option.value = option.textContent = name;
    $("example").append(option);
  }
  $("example").addEventListener("change", (e) => pick(e.target.value));
  $("prepare").addEventListener("click", guarded(prepare));
  $("run").addEventListener("click", guarded(run));
  for (const radio of document.querySelectorAll("input[name=notation]")) {
    radio.addEventListener("change", showGrammar);
  }
  $("key").value = sessionStorage.getItem("toolbridge-key") || "";
  $("key").addEventListener("change", () => sessionStorage.setItem("toolbridge-key", $("key").value));
  const params = new URLSearchParams(location.search);
  pick(EXAMPLES[params.get("example")] ? params.get("example") : "weather_required");
  if (params.get("run")) guarded(run)();
  else guarded(prepare)();
}

start();
