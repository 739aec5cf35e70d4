#!/usr/bin/env bash
# Real agent clients against toolbridge, one task each, and a table of how they fared.
#
# Each client is installed from its registry at a pinned version into target/clients/
# (npm: Codex CLI, Claude Code, opencode; PyPI: the `llm` CLI, OpenAI's Agents SDK,
# pydantic-ai, langchain-openai, the Anthropic SDK's tool runner — their scripts are in
# scripts/clients/), pointed at `toolbridge serve` on the default model the way its own
# documentation configures a local OpenAI- or Anthropic-compatible server, and run
# non-interactively with a timeout on a task that needs a tool: the CLIs write hello.txt,
# the SDKs call get_weather (scripts/clients/weather.py). Twice: on the embedded engine,
# and through a remote one (toolbridge --engine in front of llama.cpp's own server,
# scripts/llama-server.sh).
#
# Per client and engine the table says:
#   requests   how many requests toolbridge answered for it (its log, one line each)
#   wire ok    at least one request, and none answered 4xx/5xx nor failed in generation
#   tool       the task's tool ran: hello.txt exists, or get_weather left its record
#   exit       the client's exit status (124: the timeout; 3: the SDK gave up on the model's answers)
#   seconds    the client's wall time
# A 0.5B model often answers without the tool; the wire must never be why. Each run's
# files (client output, the server log lines of its requests) are kept under
# target/clients/runs/ENGINE/CLIENT/, and the table in target/clients/table.md.
#
#   scripts/clients.sh [--engine embedded|remote|both] [--timeout SECS] [--no-build] [CLIENT...]
#
# CLIENT names pick rows (default: all; `scripts/clients.sh --list` names them). The
# release binary is built first (cargo build --release -p toolbridge-cli --features llama)
# unless --no-build; CARGO_TARGET_DIR is honoured.
set -euo pipefail

readonly CODEX_VERSION=0.171.0
readonly CLAUDE_CODE_VERSION=2.1.332
readonly OPENCODE_VERSION=1.18.33
readonly PYTHON_PACKAGES=(
    openai-agents==0.24.0
    "pydantic-ai-slim[openai,anthropic]==2.68.0"
    langchain-openai==1.7.4
    llm==0.36
    anthropic==2.14.0
)
readonly API_KEY=sk-toolbridge-clients
readonly FILE_TASK='Create a file named hello.txt in the current directory containing exactly the text: Hello from toolbridge'
readonly WEATHER_TASK='What is the weather like in Paris today? Use the get_weather tool.'

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly root
readonly home="$root/target/clients"
readonly npm_bin="$home/npm/node_modules/.bin"
readonly venv="$home/venv"
readonly model_file="$root/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
toolbridge="${CARGO_TARGET_DIR:-$root/target}/release/toolbridge"
case "$toolbridge" in /*) ;; *) toolbridge="$root/$toolbridge" ;; esac
readonly toolbridge

die() {
    echo "clients.sh: $*" >&2
    exit 1
}

# The clients, in the table's order: the npm CLIs, `llm`, then the Python SDKs.
all_clients() {
    printf '%s\n' codex claude-code claude-code-write opencode llm
    "$venv/bin/python" "$root/scripts/clients/sdk_clients.py" --list
}

install_npm_clients() {
    local wanted="@openai/codex@$CODEX_VERSION @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION opencode-ai@$OPENCODE_VERSION"
    if [ "$(cat "$home/npm/.installed" 2>/dev/null)" != "$wanted" ]; then
        echo "clients.sh: installing $wanted into $home/npm" >&2
        mkdir -p "$home/npm"
        # shellcheck disable=SC2086 # one word per package
        npm install --prefix "$home/npm" --no-audit --no-fund --loglevel=error $wanted >&2
        echo "$wanted" >"$home/npm/.installed"
    fi
}

install_python_clients() {
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    local wanted="${PYTHON_PACKAGES[*]}"
    if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$wanted" ]; then
        echo "clients.sh: installing $wanted into $venv" >&2
        "$venv/bin/pip" install --quiet --disable-pip-version-check "${PYTHON_PACKAGES[@]}" >&2
        echo "$wanted" >"$venv/.installed"
    fi
}

# Starts `toolbridge serve ARGS…` on a free port, its log in $1; sets base_url, model and
# server_pid.
start_toolbridge() {
    local log="$1"
    shift
    local banner="$log.banner"
    NO_COLOR=1 "$toolbridge" serve --port 0 --api-key "$API_KEY" "$@" >"$banner" 2>"$log" &
    server_pid=$!
    base_url=""
    for _ in $(seq 600); do
        base_url="$(sed -n 's/^listening on //p' "$banner")"
        [ -n "$base_url" ] && break
        kill -0 "$server_pid" 2>/dev/null || die "toolbridge serve exited; see $log"
        sleep 0.5
    done
    [ -n "$base_url" ] || die "toolbridge serve printed no address in 300 s; see $log"
    export base_url model
    model="$(curl -sf -H "Authorization: Bearer $API_KEY" "$base_url/v1/models" |
        "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])')"
}

# Starts llama.cpp's own server on the default model; sets upstream_url and upstream_pid.
# Its stdin is a pipe held by this script, so it exits with the script.
start_llama_server() {
    local log="$1" fifo="$home/llama-server.stdin"
    rm -f "$fifo"
    mkfifo "$fifo"
    "$root/scripts/llama-server.sh" --model "$model_file" --port 0 --threads 2 \
        --ctx-size 32768 --exit-with-stdin <"$fifo" >"$log.banner" 2>"$log" &
    upstream_pid=$!
    exec 7>"$fifo"
    upstream_url=""
    for _ in $(seq 1200); do
        upstream_url="$(sed -n 's/^listening on //p' "$log.banner")"
        [ -n "$upstream_url" ] && break
        kill -0 "$upstream_pid" 2>/dev/null || die "llama-server exited; see $log"
        sleep 0.5
    done
    [ -n "$upstream_url" ] || die "llama-server printed no address in 600 s; see $log"
}

stop_servers() {
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    server_pid=""
    if [ -n "${upstream_pid:-}" ]; then
        exec 7>&-
        wait "$upstream_pid" 2>/dev/null || true
        upstream_pid=""
    fi
    return 0
}
trap stop_servers EXIT

# The client's command, run in its own folder ($2) with a private HOME; a function that
# `timeout` runs in a child bash, so it and what it reads are exported.
run_client() {
    local client="$1" dir="$2"
    local -a env=(HOME="$dir/home" NO_COLOR=1)
    case "$client" in
    codex)
        mkdir -p "$dir/home/codex"
        cat >"$dir/home/codex/config.toml" <<EOF
model = "$model"
model_provider = "toolbridge"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.toolbridge]
name = "toolbridge"
base_url = "$base_url/v1"
env_key = "TOOLBRIDGE_API_KEY"
wire_api = "responses"

[analytics]
enabled = false
EOF
        env "${env[@]}" CODEX_HOME="$dir/home/codex" TOOLBRIDGE_API_KEY="$API_KEY" \
            "$npm_bin/codex" exec --skip-git-repo-check --cd "$dir/work" "$FILE_TASK"
        ;;
    claude-code | claude-code-write)
        local -a tools=()
        [ "$client" = claude-code-write ] && tools=(--tools Write)
        (cd "$dir/work" && env "${env[@]}" ANTHROPIC_BASE_URL="$base_url" \
            ANTHROPIC_API_KEY="$API_KEY" ANTHROPIC_MODEL="$model" \
            ANTHROPIC_DEFAULT_HAIKU_MODEL="$model" ANTHROPIC_DEFAULT_SONNET_MODEL="$model" \
            ANTHROPIC_DEFAULT_OPUS_MODEL="$model" CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
            DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
            "$npm_bin/claude" -p --permission-mode acceptEdits "${tools[@]}" -- "$FILE_TASK")
        ;;
    opencode)
        cat >"$dir/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "model": "toolbridge/$model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "toolbridge": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "toolbridge",
      "options": {"baseURL": "$base_url/v1", "apiKey": "$API_KEY"},
      "models": {"$model": {"name": "$model", "tool_call": true}}
    }
  }
}
EOF
        (cd "$dir/work" && env "${env[@]}" OPENCODE_CONFIG="$dir/opencode.json" \
            XDG_CACHE_HOME="$home/cache" OPENCODE_DISABLE_AUTOUPDATE=1 \
            OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
            "$npm_bin/opencode" run "$FILE_TASK")
        ;;
    llm)
        mkdir -p "$dir/llm"
        cat >"$dir/llm/extra-openai-models.yaml" <<EOF
- model_id: toolbridge
  model_name: $model
  api_base: $base_url/v1
  api_key_name: toolbridge
  supports_tools: true
EOF
        printf '{"toolbridge": "%s"}\n' "$API_KEY" >"$dir/llm/keys.json"
        (cd "$dir/work" && env "${env[@]}" LLM_USER_PATH="$dir/llm" \
            "$venv/bin/llm" -m toolbridge --no-log --td \
            --functions "$root/scripts/clients/weather.py" "$WEATHER_TASK")
        ;;
    *)
        (cd "$dir/work" && env "${env[@]}" PYTHONPATH="$root/scripts/clients" \
            "$venv/bin/python" "$root/scripts/clients/sdk_clients.py" \
            "$client" "$base_url" "$API_KEY" "$model")
        ;;
    esac
}

export -f run_client
export FILE_TASK WEATHER_TASK API_KEY root home npm_bin venv

# Whether the client's task ran its tool.
tool_called() {
    local client="$1" dir="$2"
    case "$client" in
    codex | claude-code* | opencode) [ -f "$dir/work/hello.txt" ] ;;
    *) [ -s "$dir/work/tool-called.txt" ] ;;
    esac
}

# One row: runs the client and judges the server's log lines written meanwhile.
measure() {
    local engine="$1" client="$2" log="$3"
    local dir="$home/runs/$engine/$client"
    rm -rf "$dir"
    mkdir -p "$dir/work" "$dir/home"
    local before started rc=0 seconds
    before="$(wc -l <"$log")"
    started="$EPOCHREALTIME"
    # timeout kills the client's whole process group.
    timeout --kill-after=10 "$timeout" bash -c 'run_client "$@"' _ "$client" "$dir" \
        </dev/null >"$dir/client.log" 2>&1 || rc=$?
    seconds="$(awk "BEGIN { print $EPOCHREALTIME - $started }")"
    sleep 1 # the server logs a stream's line when it ends
    tail -n "+$((before + 1))" "$log" >"$dir/server.log"
    local requests faults
    requests="$(grep -c ' request ' "$dir/server.log" || true)"
    # The Anthropic tool runner's thread refusal is expected: its SDK resends the whole
    # conversation on it (toolbridge keeps no server-side threads).
    faults="$(grep -E ' request .*status=[45][0-9]{2}|generation failed' "$dir/server.log" |
        grep -vE 'code="?thread_unsupported_request' |
        sed -E 's/.*(method=[A-Z]+ path=[^ ]+ status=[0-9]+( code=[^ ]+)?).*/\1/; s/.*(generation failed.*)/\1/' |
        sort | uniq -c | sed -E 's/^ +//' | paste -sd ';' || true)"
    local wire=yes tool=no
    if [ "$requests" -eq 0 ] || [ -n "$faults" ]; then wire=no; fi
    tool_called "$client" "$dir" && tool=yes
    printf '| %s | %s | %s | %s | %s | %s | %.0f | %s |\n' "$client" "$engine" "$requests" \
        "$wire" "$tool" "$rc" "$seconds" "$faults" | tee -a "$table"
}

run_engine() {
    local engine="$1"
    shift
    mkdir -p "$home/runs/$engine"
    local log="$home/runs/$engine/toolbridge.log"
    if [ "$engine" = remote ]; then
        start_llama_server "$home/runs/$engine/llama-server.log"
        start_toolbridge "$log" --engine "$upstream_url"
    else
        # The agents' own prompts (instructions and tool lists) run past the embedded
        # engine's default 8192 tokens: the model's whole trained context, as llama-server
        # gets it above.
        start_toolbridge "$log" --model "$model_file" --ctx-size 32768
    fi
    echo "clients.sh: $engine engine: toolbridge at $base_url, model $model" >&2
    local client
    for client in "$@"; do
        measure "$engine" "$client" "$log"
    done
    stop_servers
}

main() {
    local engines=(embedded remote) build=1 clients=()
    timeout=420
    while [ $# -gt 0 ]; do
        case "$1" in
        --engine)
            case "${2:-}" in
            both) engines=(embedded remote) ;;
            embedded | remote) engines=("$2") ;;
            *) die "--engine takes embedded, remote or both" ;;
            esac
            shift
            ;;
        --timeout) timeout="${2:?--timeout takes seconds}" && shift ;;
        --no-build) build=0 ;;
        --list) install_python_clients && all_clients && return ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' && return ;;
        -*) die "unknown option $1" ;;
        *) clients+=("$1") ;;
        esac
        shift
    done
    cd "$root"
    [ "$build" = 1 ] && cargo build --release -p toolbridge-cli --features llama
    [ -x "$toolbridge" ] || die "no release binary at $toolbridge (build it, or drop --no-build)"
    scripts/fetch-model.sh >/dev/null
    install_npm_clients
    install_python_clients
    [ ${#clients[@]} -gt 0 ] || mapfile -t clients < <(all_clients)
    local known
    known="$(all_clients)"
    for client in "${clients[@]}"; do
        grep -qxF "$client" <<<"$known" || die "unknown client $client (--list names them)"
    done
    table="$home/table.md"
    mkdir -p "$home"
    {
        echo "| client | engine | requests | wire ok | tool called | exit | seconds | 4xx/5xx |"
        echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    } | tee "$table"
    for engine in "${engines[@]}"; do
        run_engine "$engine" "${clients[@]}"
    done
}

main "$@"
