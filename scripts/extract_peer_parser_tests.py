#!/usr/bin/env python3
"""Extract vLLM's and SGLang's tool-parser test cases as data for our test.

vLLM (`tests/tool_parsers/`) and SGLang (`test/registered/unit/function_call/`) state their
cases as pytest code: parametrize lists, model outputs in local variables, and assertions
on what the parser returned. This script reads that code with `ast` (it runs none of it)
and writes each case it can state as one JSON line:

    {"id", "parser", "template", "style", "tools", "output", "expect"}

into `crates/dialect/tests/peer_parsers/<peer>.jsonl`. `expect` holds only what the peer's
test checks: `content` when it is asserted, `tool_calls` ([{name, arguments}], a call's
`name` or `arguments` left out when the test does not check it, `arguments_partial` when
it checks only some keys) and `min_tool_calls` when the test asks only for "at least".

How a case is found, for every `test_*` function (parametrized cases expanded):
- its input is the text passed to the parser (`extract_tool_calls`, `run_tool_extraction`,
  SGLang's `detect_and_parse` / `parse_non_stream`, or a helper of the file that returns
  one of those), evaluated from literals, module constants and parameters;
- its expectation is read from the assertions on what came back (`len(calls) == 2`,
  `calls[0].function.name == "x"`, `json.loads(calls[0].function.arguments) == {...}`,
  `args["k"] == v`, `result.content == "..."`, `tools_called is False`,
  `assert_tool_calls(calls, [ToolCall(...)])`, ...). Assertions it cannot read are left out
  (the case then checks less), and a case none of whose assertions it can read is dropped.
- vLLM's `ToolParserTestConfig` (common_tests.py) is expanded into the common tests it
  drives, checking what those tests check.
Cases that state the same output and expectation twice (a `streaming` parameter) are kept
once. Per-file facts (which parser, which template) are in `VLLM_FILES` / `SGLANG_FILES`.

Usage: scripts/extract_peer_parser_tests.py vllm   PEER_SRC/vllm-0.33.0
       scripts/extract_peer_parser_tests.py sglang PEER_SRC/sglang
"""

import ast
import itertools
import json
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "crates/dialect/tests/peer_parsers"


# Readings added for SGLang's files: generator expressions, loops over a literal list of
# cases, a parser object built with the tools (`FunctionCallParser(tools, "dots")`), the
# calls' names or arguments as one list (`[c.name for c in calls] == [...]`),
# `assertIs` / `assertAlmostEqual`, and an assert read against the parse its variable holds
# (two parses in one test, their asserts after both). vLLM's cases are read without them, so that they stay as
# reviewed (with them, about 25 of its lines would change: more cases, more checks).
WIDER_READING = {"vllm": False, "sglang": True}
wider = False


class Unknown(Exception):
    """An expression this reader cannot evaluate to a literal."""


class Sym:
    """A path into what the parser returned: ('info',), ('content',), ('calls',),
    ('call', i), ('fn', i), ('name', i), ('args_raw', i), ('args', i, keys), ('len',),
    ('tools_called',), ('each', 'name' | 'args') (that of every call, in order)."""

    def __init__(self, *path, case=None):
        self.path = path
        self.case = case  # the Expect of the parse this path reads from

    def derive(self, *path):
        return Sym(*path, case=self.case)

    def __repr__(self):
        return f"Sym{self.path}"


NO_RETURN = object()
# Where a test body's environment keeps the tools its parser was made with.
PARSER_TOOLS = "<parser tools>"


class Fixture:
    def __init__(self, node):
        self.node = node


# ---------------------------------------------------------------- evaluation of literals

STR_METHODS = {"strip", "lstrip", "rstrip", "replace", "format", "join", "lower", "upper",
               "split", "splitlines", "encode", "decode", "rjust", "ljust"}
CALL_CLASSES = {"ToolCall", "FunctionCall", "DeltaToolCall", "DeltaFunctionCall"}


def norm_call(kind, kwargs):
    """Calls written as ToolCall(function=FunctionCall(name, arguments)) or as
    ToolCallItem(name=, parameters=) become {"name", "arguments"}."""
    if "function" in kwargs and isinstance(kwargs["function"], dict):
        return norm_call("FunctionCall", kwargs["function"])
    out = {"__call__": True}
    if "name" in kwargs:
        out["name"] = kwargs["name"]
    for key in ("arguments", "parameters"):
        if key in kwargs:
            out["arguments"] = kwargs[key]
    return out


class Evaluator:
    def __init__(self, module_env, fixtures):
        self.module_env = module_env
        self.fixtures = fixtures
        self.functions = {}

    def ev(self, node, env):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(value.value)
                else:
                    inner = self.ev(value.value, env)
                    if isinstance(inner, Sym):
                        raise Unknown("f-string of a result")
                    spec = ""
                    if value.format_spec is not None:
                        spec = self.ev(value.format_spec, env)
                    if value.conversion == ord("r"):
                        inner = repr(inner)
                    elif value.conversion == ord("s"):
                        inner = str(inner)
                    parts.append(format(inner, spec))
            return "".join(parts)
        if isinstance(node, ast.Name):
            if node.id in env:
                value = env[node.id]
            elif node.id in self.module_env:
                value = self.module_env[node.id]
            elif node.id in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.id]
            else:
                raise Unknown(node.id)
            if isinstance(value, Fixture):
                return self.fixture_value(value, env)
            return value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items.extend(self.ev(element.value, env))
                else:
                    items.append(self.ev(element, env))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            out = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    out.update(self.ev(value, env))
                else:
                    out[self.ev(key, env)] = self.ev(value, env)
            return out
        if isinstance(node, ast.BinOp):
            left, right = self.ev(node.left, env), self.ev(node.right, env)
            if isinstance(left, Sym) or isinstance(right, Sym):
                raise Unknown("arithmetic on a result")
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Mod):
                return left % right
            if isinstance(node.op, ast.Sub):
                return left - right
            raise Unknown("operator")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.ev(node.operand, env)
        if isinstance(node, ast.Subscript):
            base = self.ev(node.value, env)
            if isinstance(base, Sym):
                raise Unknown("subscript of a result")
            index = self.ev(node.slice, env) if not isinstance(node.slice, ast.Slice) else None
            if isinstance(node.slice, ast.Slice):
                lower = self.ev(node.slice.lower, env) if node.slice.lower else None
                upper = self.ev(node.slice.upper, env) if node.slice.upper else None
                return base[lower:upper]
            try:
                return base[index]
            except (KeyError, IndexError, TypeError) as error:
                raise Unknown(str(error))
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                if f"self.{node.attr}" in env:
                    return env[f"self.{node.attr}"]
                raise Unknown(f"self.{node.attr}")
            base = self.ev(node.value, env)
            if isinstance(base, dict) and node.attr in base:
                return base[node.attr]
            raise Unknown(f"attribute {node.attr}")
        if isinstance(node, ast.Call):
            return self.ev_call(node, env)
        if isinstance(node, ast.BoolOp):
            value = None
            for operand in node.values:
                value = self.ev(operand, env)
                if isinstance(node.op, ast.Or) and value:
                    return value
                if isinstance(node.op, ast.And) and not value:
                    return value
            return value
        if isinstance(node, ast.IfExp):
            return self.ev(node.body if self.ev(node.test, env) else node.orelse, env)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.ev(node.left, env), self.ev(node.comparators[0], env)
            op = node.ops[0]
            if isinstance(op, ast.Eq):
                return left == right
            if isinstance(op, ast.Is):
                return left is right
            if isinstance(op, ast.IsNot):
                return left is not right
            if isinstance(op, ast.NotEq):
                return left != right
        if (isinstance(node, ast.ListComp) or (wider and isinstance(node, ast.GeneratorExp))) \
                and len(node.generators) == 1:
            gen = node.generators[0]
            out = []
            for item in self.ev(gen.iter, env):
                local = dict(env)
                bind(gen.target, item, local)
                if all(self.ev(cond, local) for cond in gen.ifs):
                    out.append(self.ev(node.elt, local))
            return out
        raise Unknown(type(node).__name__)

    def call_function(self, function, args, kwargs):
        """A module helper that builds a literal (`_wrap(...)`, `make_tool_call(...)`), run
        on literal arguments: its assignments, `if`s and its return."""
        local = {}
        params = function.args.args
        defaults = function.args.defaults
        for param, default in zip(params[len(params) - len(defaults):], defaults):
            local[param.arg] = self.ev(default, {})
        for param, value in zip(params, args):
            local[param.arg] = value
        for param, default in zip(function.args.kwonlyargs, function.args.kw_defaults):
            if default is not None:
                local[param.arg] = self.ev(default, {})
        if function.args.vararg is not None:
            local[function.args.vararg.arg] = tuple(args[len(params):])
        local.update(kwargs)
        result = self.run_body(function.body, local)
        if result is NO_RETURN:
            raise Unknown("helper without return")
        return result

    def run_body(self, body, local):
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue
            if isinstance(statement, ast.Return):
                return self.ev(statement.value, local) if statement.value else None
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) \
                    else [statement.target]
                value = self.ev(statement.value, local)
                for target in targets:
                    bind(target, value, local)
                continue
            if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                current = local[statement.target.id]
                value = self.ev(statement.value, local)
                if isinstance(statement.op, ast.Add):
                    local[statement.target.id] = current + value
                    continue
                raise Unknown("helper operator")
            if isinstance(statement, ast.For):
                for item in self.ev(statement.iter, local):
                    bind(statement.target, item, local)
                    result = self.run_body(statement.body, local)
                    if result is not NO_RETURN:
                        return result
                continue
            if isinstance(statement, ast.If):
                branch = statement.body if self.ev(statement.test, local) else statement.orelse
                result = self.run_body(branch, local)
                if result is not NO_RETURN:
                    return result
                continue
            raise Unknown("helper statement")
        return NO_RETURN

    def fixture_value(self, fixture, env):
        for statement in ast.walk(fixture.node):
            if isinstance(statement, ast.Return) and statement.value is not None:
                return self.ev(statement.value, env)
        raise Unknown("fixture")

    def ev_call(self, node, env):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "param" and isinstance(func, ast.Attribute):  # pytest.param
            values = [self.ev(arg, env) for arg in node.args]
            marks = ""
            for keyword in node.keywords:
                if keyword.arg == "marks" and "xfail" in ast.unparse(keyword.value):
                    marks = ast.unparse(keyword.value)
            ident = next((self.ev(k.value, env) for k in node.keywords if k.arg == "id"), None)
            return ("__param__", values, ident, marks)
        args = [self.ev(arg, env) for arg in node.args if not isinstance(arg, ast.Starred)]
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.ev(keyword.value, env))
            else:
                kwargs[keyword.arg] = self.ev(keyword.value, env)
        if isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Name) and owner.id == "json":
                if func.attr == "dumps":
                    return json.dumps(*args, **kwargs)
                if func.attr == "loads":
                    return json.loads(*args)
            if isinstance(owner, ast.Name) and owner.id == "textwrap" and func.attr == "dedent":
                return textwrap.dedent(*args)
            base = self.ev(owner, env)
            if isinstance(base, (str, bytes)) and func.attr in STR_METHODS:
                return getattr(base, func.attr)(*args, **kwargs)
            if isinstance(base, dict) and func.attr in ("get", "copy", "items", "keys"):
                return getattr(base, func.attr)(*args)
            raise Unknown(f"method {func.attr}")
        if name in ("dict",):
            return dict(*args, **kwargs)
        if name in ("list", "tuple", "str", "int", "float", "len", "sorted", "range", "zip",
                    "chr"):
            return {"list": list, "tuple": tuple, "str": str, "int": int, "float": float,
                    "len": len, "sorted": sorted, "range": range, "zip": zip,
                    "chr": chr}[name](*args)
        if name == "dedent":
            return textwrap.dedent(*args)
        if name in CALL_CLASSES or name == "ToolCallItem":
            return norm_call(name, kwargs)
        if name in self.functions:
            return self.call_function(self.functions[name], args, kwargs)
        if name and name[0].isupper() and not args:
            # a pydantic model or dataclass written with literal keywords
            out = dict(kwargs)
            out["__class__"] = name
            return out
        if wider and name and name[0].isupper() and name.endswith("Parser"):
            # a peer's parser object built on literal arguments (SGLang's
            # `FunctionCallParser(tools, "dots")`): kept for the tools it was given
            out = dict(kwargs)
            out["__class__"] = name
            out["__args__"] = args
            return out
        raise Unknown(f"call {name}")


def bind(target, value, env):
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, Sym):
            raise Unknown("unpacking a result")
        values = list(value)
        if len(values) != len(target.elts):
            raise Unknown("unpack length")
        for element, item in zip(target.elts, values):
            bind(element, item, env)


# ---------------------------------------------------------------- tools, as OpenAI writes them


def openai_tools(value):
    """A list of tools written as dicts, ChatCompletionToolsParam/Tool/Function models, or a
    request holding them, as OpenAI tool objects; None when `value` is none of these."""
    if isinstance(value, dict) and value.get("__class__", "").endswith("Request"):
        value = value.get("tools")
    if not isinstance(value, list) or not value:
        return None
    tools = []
    for tool in value:
        if not isinstance(tool, dict):
            return None
        function = tool.get("function", tool)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        clean = {"name": function["name"]}
        if isinstance(function.get("description"), str):
            clean["description"] = function["description"]
        parameters = function.get("parameters")
        if isinstance(parameters, dict):
            clean["parameters"] = strip_classes(parameters)
        tools.append({"type": "function", "function": clean})
    return tools


def strip_classes(value):
    if isinstance(value, dict):
        return {k: strip_classes(v) for k, v in value.items() if k != "__class__"}
    if isinstance(value, list):
        return [strip_classes(v) for v in value]
    return value


# ---------------------------------------------------------------- reading one test


class Expect:
    def __init__(self):
        self.content = None
        self.content_checked = False
        self.count = None
        self.min_count = None
        self.calls = {}  # index -> {"name"?, "arguments"?, "partial": {path: value}}
        self.any = False

    def call(self, index):
        return self.calls.setdefault(index, {})

    def record(self, path, value):
        kind = path[0]
        if kind == "content":
            if isinstance(value, str) or value is None:
                self.content, self.content_checked, self.any = value or "", True, True
        elif kind == "tools_called":
            if value is False:
                self.count, self.any = 0, True
            elif value is True and self.count is None:
                self.min_count, self.any = max(self.min_count or 0, 1), True
        elif kind == "len":
            if isinstance(value, int):
                self.count, self.any = value, True
        elif kind == "calls":
            if isinstance(value, list):
                self.count, self.any = len(value), True
                for index, call in enumerate(value):
                    if isinstance(call, dict) and call.get("__call__"):
                        self.set_call(index, call)
        elif kind == "name":
            if isinstance(value, str):
                self.call(path[1])["name"], self.any = value, True
        elif kind == "fn":
            if isinstance(value, dict):
                self.set_call(path[1], norm_call("FunctionCall", value))
        elif kind == "args_raw":
            if isinstance(value, str):
                try:
                    self.call(path[1])["arguments"] = json.loads(value) if value else {}
                except json.JSONDecodeError:
                    return
                self.any = True
        elif kind == "each":
            # one value per call, in order: their names or their arguments
            if isinstance(value, list):
                self.count, self.any = len(value), True
                for index, item in enumerate(value):
                    if path[1] == "name":
                        self.call(index)["name"] = item
                    else:
                        self.call(index)["arguments"] = item
        elif kind == "args":
            index, keys = path[1], path[2]
            if not keys:
                self.call(index)["arguments"], self.any = value, True
            else:
                self.call(index).setdefault("partial", {})[keys] = value
                self.any = True

    def set_call(self, index, call):
        entry = self.call(index)
        if "name" in call:
            entry["name"] = call["name"]
        if "arguments" in call:
            arguments = call["arguments"]
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except json.JSONDecodeError:
                    return
            entry["arguments"] = arguments
        self.any = True

    def to_json(self):
        out = {}
        if self.content_checked:
            out["content"] = self.content
        count = self.count
        known = max(self.calls) + 1 if self.calls else 0
        if count is None and not self.min_count and not known:
            return out  # the test checks no call
        if count is None:
            minimum = max(self.min_count or 0, known)
            if minimum:
                out["min_tool_calls"] = minimum
            count = known
        calls = []
        for index in range(count):
            entry = self.calls.get(index, {})
            call = {}
            if "name" in entry:
                call["name"] = entry["name"]
            if "arguments" in entry:
                call["arguments"] = entry["arguments"]
            elif entry.get("partial"):
                nested = {}
                for keys, value in entry["partial"].items():
                    if any(isinstance(key, int) for key in keys):
                        continue  # a path into a list: not stated as a partial object
                    node = nested
                    for key in keys[:-1]:
                        node = node.setdefault(key, {})
                        if not isinstance(node, dict):
                            break
                    else:
                        node[keys[-1]] = value
                if nested:
                    call["arguments"] = nested
                    call["arguments_partial"] = True
            calls.append(call)
        out["tool_calls"] = calls
        return out


EXTRACTORS = {"extract_tool_calls", "run_tool_extraction", "run_tool_extraction_nonstreaming",
              "detect_and_parse", "parse_non_stream"}
# those that answer a (content, calls) pair: vLLM's helper, SGLang's FunctionCallParser
PAIR_EXTRACTORS = {"run_tool_extraction", "parse_non_stream"}


class TestReader:
    """Walks one test body: finds the extraction call, then reads the assertions."""

    def __init__(self, evaluator, helpers):
        self.evaluator = evaluator
        self.helpers = helpers  # module functions that return an extraction, name -> shape
        self.cases = []

    def extraction(self, node, env):
        """(input text, shape) when `node` calls the parser, shape 'info' or 'pair'."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in EXTRACTORS:
            shape = "pair" if name in PAIR_EXTRACTORS else "info"
        elif name in self.helpers:
            shape = self.helpers[name]
        else:
            return None
        receiver = None
        if isinstance(func, ast.Attribute):
            try:
                receiver = self.evaluator.ev(func.value, env)
            except Exception:
                receiver = None
            if isinstance(receiver, dict) and "Reasoning" in receiver.get("__class__", ""):
                return None  # a reasoning parser's parse_non_stream, not a tool parser's
        candidates = list(node.args) + [k.value for k in node.keywords
                                        if k.arg in ("model_output", "text", "output")]
        for arg in candidates:
            try:
                value = self.evaluator.ev(arg, env)
            except Unknown:
                continue
            except Exception:
                continue
            if isinstance(value, str):
                tools = None
                for other in list(node.args) + [k.value for k in node.keywords]:
                    try:
                        tools = tools or openai_tools(self.evaluator.ev(other, env))
                    except Exception:
                        pass
                return value, shape, tools or parser_tools(receiver, env)
        return None

    def sym(self, node, env):
        """The result path `node` names, if it names one."""
        if isinstance(node, ast.Name):
            value = env.get(node.id)
            return value if isinstance(value, Sym) else None
        if isinstance(node, ast.Attribute):
            base = self.sym(node.value, env)
            if base is None:
                return None
            kind = base.path[0]
            if kind == "info":
                field = {"content": "content", "normal_text": "content",
                         "tool_calls": "calls", "calls": "calls",
                         "tools_called": "tools_called"}.get(node.attr)
                return base.derive(field) if field else None
            if kind == "call" and node.attr == "function":
                return base.derive("fn", base.path[1])
            if kind in ("fn", "call") and node.attr == "name":
                return base.derive("name", base.path[1])
            if kind in ("fn", "call") and node.attr in ("arguments", "parameters"):
                return base.derive("args_raw", base.path[1])
            return None
        if isinstance(node, ast.Subscript):
            base = self.sym(node.value, env)
            if base is None:
                return None
            try:
                index = self.evaluator.ev(node.slice, env)
            except Exception:
                return None
            if base.path[0] == "calls" and isinstance(index, int):
                return base.derive("call", index)
            if base.path[0] == "args":
                return base.derive("args", base.path[1], base.path[2] + (index,))
            return None
        if wider and isinstance(node, ast.ListComp) and len(node.generators) == 1:
            # [c.name for c in calls], [json.loads(c.parameters) for c in calls]
            gen = node.generators[0]
            inner = self.sym(gen.iter, env)
            if inner is None or inner.path[0] != "calls" or gen.ifs \
                    or not isinstance(gen.target, ast.Name):
                return None
            local = dict(env)
            local[gen.target.id] = inner.derive("call", None)
            each = self.sym(node.elt, local)
            if each is not None and each.path[0] == "name":
                return inner.derive("each", "name")
            if each is not None and each.path[0] == "args" and not each.path[2]:
                return inner.derive("each", "args")
            return None
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "len" and node.args:
                inner = self.sym(node.args[0], env)
                if inner is not None and inner.path[0] == "calls":
                    return inner.derive("len")
            if (isinstance(func, ast.Attribute) and func.attr == "loads" and node.args):
                inner = self.sym(node.args[0], env)
                if inner is not None and inner.path[0] == "args_raw":
                    return inner.derive("args", inner.path[1], ())
            if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
                base = self.sym(func.value, env)
                if base is not None and base.path[0] == "args":
                    try:
                        key = self.evaluator.ev(node.args[0], env)
                    except Exception:
                        return None
                    return base.derive("args", base.path[1], base.path[2] + (key,))
            if isinstance(func, ast.Attribute) and func.attr == "strip" and not node.args:
                inner = self.sym(func.value, env)
                if inner is not None and inner.path[0] == "content":
                    return inner
        return None

    def literal(self, node, env):
        try:
            value = self.evaluator.ev(node, env)
        except Exception:
            raise Unknown("literal")
        if isinstance(value, Sym):
            raise Unknown("a result")
        return value

    def read_assert(self, test, env, expect):
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for value in test.values:
                self.read_assert(value, env, expect)
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            sym = self.sym(test.operand, env)
            if sym is None:
                return
            expect = sym.case or expect  # the parse the assert reads from
            if sym.path[0] in ("tools_called",):
                expect.record(sym.path, False)
            elif sym.path[0] == "calls":
                expect.record(("len",), 0)
            elif sym.path[0] == "content":
                expect.record(sym.path, "")
            return
        sym = self.sym(test, env)
        if sym is not None:
            expect = sym.case or expect
            if sym.path[0] == "tools_called":
                expect.record(sym.path, True)
            elif sym.path[0] == "calls":
                expect.min_count = max(expect.min_count or 0, 1)
                expect.any = True
            return
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op = test.ops[0]
            left, right = test.left, test.comparators[0]
            for side, other in ((left, right), (right, left)):
                sym = self.sym(side, env)
                if sym is None:
                    continue
                try:
                    value = self.literal(other, env)
                except Unknown:
                    return
                expect = sym.case or expect
                if isinstance(op, (ast.Eq, ast.Is)):
                    expect.record(sym.path, value)
                elif isinstance(op, (ast.Gt, ast.GtE)) and sym.path[0] == "len":
                    minimum = value + 1 if isinstance(op, ast.Gt) else value
                    if side is left and isinstance(minimum, int):
                        expect.min_count = max(expect.min_count or 0, minimum)
                        expect.any = True
                return

    def read_call_assert(self, call, env, expect):
        """assert_tool_calls(actual, expected) and its kin."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        # unittest's self.assertEqual(a, b) and kin, read as the assert they stand for
        args = call.args
        equal = ("assertEqual", "assertListEqual", "assertDictEqual")
        if wider:
            equal += ("assertAlmostEqual", "assertIs")
        if name in equal and len(args) >= 2:
            self.read_assert(ast.Compare(args[0], [ast.Eq()], [args[1]]), env, expect)
            return
        if name == "assertTrue" and args:
            self.read_assert(args[0], env, expect)
            return
        if name == "assertFalse" and args:
            self.read_assert(ast.UnaryOp(ast.Not(), args[0]), env, expect)
            return
        if name == "assertIsNone" and args:
            self.read_assert(ast.Compare(args[0], [ast.Is()], [ast.Constant(None)]), env, expect)
            return
        if name not in ("assert_tool_calls", "check_tool_calls", "_assert_tool_calls"):
            return
        if len(call.args) < 2:
            return
        sym = self.sym(call.args[0], env)
        if sym is None or sym.path[0] != "calls":
            return
        try:
            value = self.literal(call.args[1], env)
        except Unknown:
            return
        (sym.case or expect).record(("calls",), value)

    def run(self, body, env):
        """Reads one test body; returns [(input, tools, Expect)]."""
        self.found = []
        self.current = None
        self.walk(body, env)
        return [case for case in self.found if case[2].any]

    def walk(self, body, env):
        for statement in body:
            if isinstance(statement, (ast.With, ast.AsyncWith)):
                self.walk(statement.body, env)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                self.assign(statement, env)
            elif isinstance(statement, ast.Assert) and self.current is not None:
                self.read_assert(statement.test, env, self.current[2])
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                extraction = self.extraction(statement.value, env)
                if extraction is None and self.current is not None:
                    self.read_call_assert(statement.value, env, self.current[2])
            elif isinstance(statement, ast.If):
                try:
                    taken = self.evaluator.ev(statement.test, env)
                except Exception:
                    continue
                if isinstance(taken, Sym):
                    continue
                self.walk(statement.body if taken else statement.orelse, env)
            elif isinstance(statement, ast.For):
                self.unroll(statement, env)

    def unroll(self, loop, env):
        """`for a, e in zip(calls, expected)`, `for i, e in enumerate(expected)`,
        `for i in range(n)`, `for x in <literal>`: the body once per item, the calls' side
        bound to call i."""
        iterator = loop.iter
        if not isinstance(iterator, ast.Call) or not isinstance(iterator.func, ast.Name):
            # `for marker in ("a", "b")`, `for a, b in cases`: the body once per literal item
            if not wider or self.sym(iterator, env) is not None:
                return
            try:
                items = list(self.literal(iterator, env))
            except Exception:
                return
            for item in items:
                try:
                    bind(loop.target, item, env)
                except Exception:
                    return
                self.walk(loop.body, env)
            return
        kind = iterator.func.id
        try:
            if kind == "zip" and len(iterator.args) == 2:
                sides = []
                length = None
                for arg in iterator.args:
                    sym = self.sym(arg, env)
                    if sym is not None and sym.path[0] == "calls":
                        calls_side = sym
                        sides.append(None)
                    else:
                        value = self.literal(arg, env)
                        sides.append(list(value))
                        length = len(value)
                if length is None or not isinstance(loop.target, ast.Tuple):
                    return
                for index in range(length):
                    local = env
                    for element, side in zip(loop.target.elts, sides):
                        value = calls_side.derive("call", index) if side is None \
                            else side[index]
                        if isinstance(value, Sym):
                            bind_name(element, value, local)
                        else:
                            bind(element, value, local)
                    self.walk(loop.body, local)
                if self.current is not None and None in sides:
                    self.current[2].record(("len",), length) if False else None
            elif kind == "enumerate" and len(iterator.args) == 1:
                sym = self.sym(iterator.args[0], env)
                if sym is not None:
                    return
                items = list(self.literal(iterator.args[0], env))
                for index, item in enumerate(items):
                    bind(loop.target, (index, item), env)
                    self.walk(loop.body, env)
            elif kind == "range":
                for index in self.literal(iterator, env):
                    bind(loop.target, index, env)
                    self.walk(loop.body, env)
        except Unknown:
            return
        except Exception:
            return

    def assign(self, statement, env):
        targets = statement.targets if isinstance(statement, ast.Assign) \
            else [statement.target]
        value = statement.value
        if value is None:
            return
        self.note_parser_tools(value, env)
        extraction = self.extraction(value, env)
        if extraction is not None:
            text, shape, tools = extraction
            self.current = (text, tools, Expect())
            self.found.append(self.current)
            target = targets[0]
            # an assert reads from the parse its name holds, not the latest one
            case = self.current[2] if wider else None
            if shape == "pair" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                bind_name(target.elts[0], Sym("content", case=case), env)
                bind_name(target.elts[1], Sym("calls", case=case), env)
            elif isinstance(target, ast.Name):
                env[target.id] = Sym("info", case=case)
            return
        sym = self.sym(value, env)
        if sym is not None:
            for target in targets:
                bind_name(target, sym, env)
            return
        try:
            literal = self.evaluator.ev(value, env)
        except Exception:
            for target in targets:
                forget(target, env)
            return
        for target in targets:
            try:
                bind(target, literal, env)
            except Exception:
                forget(target, env)


    def note_parser_tools(self, value, env):
        """`parser = make_parser(tools=[tool])`: a parser made with tools reads with them, so
        they are the tools of the extractions that follow."""
        if not isinstance(value, ast.Call):
            return
        for keyword in value.keywords:
            if keyword.arg != "tools":
                continue
            try:
                tools = openai_tools(self.evaluator.ev(keyword.value, env))
            except Exception:
                continue
            if tools:
                env[PARSER_TOOLS] = tools


def parser_tools(receiver, env):
    """The tools the parser reading the text was built with: given to the object whose
    method reads it (`FunctionCallParser(tools, …)`), or to the call the test bound the
    parser to (`parser = make_parser(tools=[tool])`, noted by `note_parser_tools`)."""
    if isinstance(receiver, dict):
        for given in list(receiver.get("__args__", ())) + list(receiver.values()):
            tools = openai_tools(given)
            if tools:
                return tools
    return env.get(PARSER_TOOLS)


def bind_name(target, value, env):
    if isinstance(target, ast.Name):
        env[target.id] = value


def forget(target, env):
    if isinstance(target, ast.Name):
        env.pop(target.id, None)


def walk_statements(body):
    """The statements of a body in order, entering `with` blocks (not loops or branches)."""
    for statement in body:
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from walk_statements(statement.body)
        else:
            yield statement


# ---------------------------------------------------------------- parametrize expansion


def parametrizations(function, evaluator, env):
    """Each (id suffix, bindings, xfail) of a test's stacked parametrize decorators."""
    layers = []
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call)
                and ast.unparse(decorator.func).endswith("parametrize")):
            continue
        names = evaluator.ev(decorator.args[0], env) if decorator.args else None
        values_node = decorator.args[1] if len(decorator.args) > 1 else next(
            k.value for k in decorator.keywords if k.arg == "argvalues")
        if names is None:
            names = evaluator.ev(next(k.value for k in decorator.keywords
                                      if k.arg == "argnames"), env)
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        ids = None
        for keyword in decorator.keywords:
            if keyword.arg == "ids":
                try:
                    ids = evaluator.ev(keyword.value, env)
                except Unknown:
                    ids = None
        values = evaluator.ev(values_node, env)
        layer = []
        for index, value in enumerate(values):
            xfail = ""
            ident = None
            if isinstance(value, tuple) and value and value[0] == "__param__":
                _, items, ident, xfail = value
                value = tuple(items) if len(names) > 1 else items[0]
            if len(names) == 1:
                value = (value,)
            if ident is None:
                ident = ids[index] if isinstance(ids, list) and index < len(ids) else str(index)
            layer.append((str(ident), dict(zip(names, value)), xfail))
        if set(names) <= STREAMING_PARAMS:
            layer = layer[:1]
        layers.append(layer)
    if not layers:
        return [("", {}, "")]
    out = []
    for combo in itertools.product(*layers):
        ident = "-".join(part[0] for part in combo if part[0])
        bindings = {}
        xfail = ""
        for part in combo:
            bindings.update(part[1])
            xfail = xfail or part[2]
        out.append((ident, bindings, xfail))
    return out


STREAMING_PARAMS = {"streaming", "stream_interval", "chunk_size", "min_chunk", "max_chunk",
                    "api_type", "use_streaming", "stream", "tokenize"}


# ---------------------------------------------------------------- vLLM's common tests

COMMON_DEFAULTS = {
    "single_tool_call_expected_name": "get_weather",
    "single_tool_call_expected_args": {"city": "Tokyo"},
    "parallel_tool_calls_count": 2,
    "parallel_tool_calls_names": ["get_weather", "get_time"],
    "single_tool_call_expected_content": None,
}


def common_cases(config):
    """The cases vLLM's ToolParserTests mixin checks for one ToolParserTestConfig."""
    c = dict(COMMON_DEFAULTS)
    c.update({k: v for k, v in config.items() if v is not None or k not in COMMON_DEFAULTS})
    xfail = c.get("xfail_nonstreaming") or {}
    cases = []

    def add(test, output, expect):
        if isinstance(output, str):
            cases.append((test, output, expect, xfail.get(test, "")))

    add("test_no_tool_calls", c.get("no_tool_calls_output"),
        {"content": c.get("no_tool_calls_output"), "tool_calls": []})
    single = {"tool_calls": [{"name": c["single_tool_call_expected_name"],
                              "arguments": c["single_tool_call_expected_args"],
                              "arguments_partial": True}]}
    if c.get("single_tool_call_expected_content") is not None:
        single["content"] = c["single_tool_call_expected_content"]
    add("test_single_tool_call_simple_args", c.get("single_tool_call_output"), single)
    names = c["parallel_tool_calls_names"]
    calls = [{"name": name} for name in names]
    calls += [{} for _ in range(c["parallel_tool_calls_count"] - len(names))]
    parallel = {"tool_calls": calls}
    if c.get("parallel_tool_calls_expected_content") is not None:
        parallel["content"] = c["parallel_tool_calls_expected_content"]
    add("test_parallel_tool_calls", c.get("parallel_tool_calls_output"), parallel)
    add("test_various_data_types", c.get("various_data_types_output"), {"tool_calls": [{}]})
    add("test_empty_arguments", c.get("empty_arguments_output"),
        {"tool_calls": [{"arguments": {}}]})
    add("test_surrounding_text", c.get("surrounding_text_output"),
        {"tool_calls": [], "min_tool_calls": 1})
    add("test_escaped_strings", c.get("escaped_strings_output"), {"tool_calls": [{}]})
    return cases


# ---------------------------------------------------------------- one file


def module_env(tree, evaluator):
    env = {}
    fixtures = {}
    evaluator.module_env = env
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None:
                continue
            try:
                value = evaluator.ev(node.value, env)
            except Exception:
                continue
            for target in targets:
                try:
                    bind(target, value, env)
                except Exception:
                    pass
        elif (isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
              and isinstance(node.op, ast.Add) and node.target.id in env):
            try:
                env[node.target.id] = env[node.target.id] + evaluator.ev(node.value, env)
            except Exception:
                env.pop(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any("fixture" in ast.unparse(d) for d in node.decorator_list):
                fixtures[node.name] = Fixture(node)
            elif not node.name.startswith("test"):
                evaluator.functions[node.name] = node
    return env, fixtures


def test_functions(tree):
    """(class name or '', function) for every test function, fixtures of classes too."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield "", node, {}
        elif isinstance(node, ast.ClassDef):
            class_fixtures = {}
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        "fixture" in ast.unparse(d) for d in item.decorator_list):
                    class_fixtures[item.name] = Fixture(item)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    yield node.name, item, class_fixtures
            yield node.name, None, class_fixtures


def helper_shapes(tree):
    """Module functions that return the parser's answer: name -> 'info' or 'pair'."""
    helpers = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("test"):
            for statement in ast.walk(node):
                if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Call):
                    func = statement.value.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                    if name in EXTRACTORS and "stream" not in node.name:
                        helpers[node.name] = "pair" if name in PAIR_EXTRACTORS else "info"
    return helpers


def read_file(path, source_name):
    tree = ast.parse(path.read_text())
    evaluator = Evaluator({}, {})
    env, fixtures = module_env(tree, evaluator)
    evaluator.module_env = env
    helpers = helper_shapes(tree)
    set_ups = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in ("setUp", "setup_method"):
                    set_ups[node.name] = set_up_env(item, evaluator)
    out = []
    for class_name, function, class_fixtures in test_functions(tree):
        all_fixtures = dict(fixtures)
        all_fixtures.update(class_fixtures)
        if function is None:
            config = all_fixtures.get("test_config")
            if config is not None and class_fixtures.get("test_config") is not None:
                try:
                    value = evaluator.fixture_value(config, {})
                except Exception as error:
                    print(f"  {source_name}::{class_name}: config not read ({error})",
                          file=sys.stderr)
                    continue
                for test, output, expect, xfail in common_cases(value):
                    out.append({"id": f"{source_name}::{class_name}::{test}", "output": output,
                                "tools": None, "expect": expect, "xfail": xfail})
            continue
        prefix = f"{source_name}::{class_name + '::' if class_name else ''}{function.name}"
        try:
            params = parametrizations(function, evaluator, env)
        except Exception as error:
            print(f"  {prefix}: parameters not read ({error})", file=sys.stderr)
            continue
        for ident, bindings, xfail in params:
            local = dict(set_ups.get(class_name, {}))
            for arg in function.args.args:
                if arg.arg in all_fixtures and arg.arg not in bindings:
                    local[arg.arg] = all_fixtures[arg.arg]
            local.update(bindings)
            reader = TestReader(evaluator, helpers)
            try:
                found = reader.run(function.body, local)
            except Exception as error:
                print(f"  {prefix}[{ident}]: not read ({error})", file=sys.stderr)
                continue
            for number, (text, tools, expect) in enumerate(found):
                if tools is None:
                    for name in [a.arg for a in function.args.args]:
                        value = local.get(name)
                        try:
                            if isinstance(value, Fixture):
                                value = evaluator.fixture_value(value, {})
                            tools = tools or openai_tools(value)
                        except Exception:
                            pass
                ident_part = f"[{ident}]" if ident else ""
                suffix = f"#{number + 1}" if len(found) > 1 else ""
                out.append({"id": f"{prefix}{ident_part}{suffix}", "output": text, "tools": tools,
                            "expect": expect.to_json(), "xfail": xfail})
    return out


# ---------------------------------------------------------------- which parser, which template

# Each peer test file: the peer's parser name and the corpus template of the family it
# serves (`corpus:` under shared/corpus/jinja, `tests:` under crates/dialect/tests), or,
# where no template of the family is anywhere in the corpus, the toolbridge dialect the
# family would have (`style`). `by_id` overrides both for the cases whose id contains a key.
L = "corpus:llama.cpp/"
V = "corpus:vllm/"
VLLM_FILES = {
    "tests/tool_parsers/test_apertus_tool_parser.py":
        {"parser": "apertus", "template": L + "Apertus-8B-Instruct.jinja"},
    "tests/tool_parsers/test_deepseekv3_tool_parser.py":
        {"parser": "deepseek_v3", "template": V + "tool_chat_template_deepseekv3.jinja"},
    "tests/tool_parsers/test_deepseekv31_tool_parser.py":
        {"parser": "deepseek_v31", "template": "corpus:ollama-registry-gguf/deepseek-v3.1_latest.jinja"},
    "tests/tool_parsers/test_deepseekv32_tool_parser.py":
        {"parser": "deepseek_v32", "template": L + "DeepSeek-V3.2.jinja"},
    "tests/tool_parsers/test_deepseekv4_tool_parser.py":
        {"parser": "deepseek_v4", "style": "deepseek_v4"},
    "tests/tool_parsers/test_dots_tool_parser.py": {"parser": "dots", "style": "dots"},
    "tests/tool_parsers/test_ernie45_moe_tool_parser.py":
        {"parser": "ernie45", "style": "ernie4_5"},
    "tests/tool_parsers/test_functiongemma_tool_parser.py":
        {"parser": "functiongemma", "style": "functiongemma"},
    "tests/tool_parsers/test_gemma4_tool_parser.py":
        {"parser": "gemma4", "template": L + "google-gemma-4-31B-it.jinja"},
    "tests/tool_parsers/test_gigachat3_tool_parser.py":
        {"parser": "gigachat3", "template": L + "GigaChat3-10B-A1.8B.jinja"},
    "tests/tool_parsers/test_glm4_moe_tool_parser.py":
        {"parser": "glm45", "template": L + "GLM-4.6.jinja"},
    "tests/tool_parsers/test_glm47_moe_tool_parser.py":
        {"parser": "glm47", "template": L + "GLM-4.7-Flash.jinja"},
    "tests/tool_parsers/test_granite_tool_parser.py":
        {"parser": "granite", "template": L + "ibm-granite-granite-3.3-2B-Instruct.jinja"},
    "tests/tool_parsers/test_granite_20b_fc_tool_parser.py":
        {"parser": "granite-20b-fc", "template": V + "tool_chat_template_granite_20b_fc.jinja"},
    "tests/tool_parsers/test_granite4_tool_parser.py":
        {"parser": "granite4", "template": L + "ibm-granite-granite-4.0.jinja"},
    "tests/tool_parsers/test_hermes_tool_parser.py":
        {"parser": "hermes", "template": L + "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"},
    "tests/tool_parsers/test_hunyuan_a13b_tool_parser.py":
        {"parser": "hunyuan_a13b", "template": V + "tool_chat_template_hunyuan_a13b.jinja"},
    "tests/tool_parsers/test_hy_v3_tool_parser.py":
        {"parser": "hy_v3", "style": "hy3"},
    "tests/tool_parsers/test_internlm2_tool_parser.py":
        {"parser": "internlm", "template": V + "tool_chat_template_internlm2_tool.jinja"},
    "tests/tool_parsers/test_jamba_tool_parser.py":
        {"parser": "jamba", "template": "corpus:hfjs-e2e/ai21labs_AI21-Jamba-Large-1.6.jinja"},
    "tests/tool_parsers/test_k2_horizon_tool_parser.py":
        {"parser": "k2_horizon", "style": "k2_horizon"},
    "tests/tool_parsers/test_kimi_k2_tool_parser.py":
        {"parser": "kimi_k2", "template": L + "Kimi-K2-Instruct.jinja"},
    "tests/tool_parsers/test_kimi_k3_named_tool_choice.py":
        {"parser": "kimi_k3", "template": L + "Kimi-K3.jinja"},
    "tests/tool_parsers/test_lfm2_tool_parser.py":
        {"parser": "lfm2", "template": L + "LFM2.5-Instruct.jinja"},
    "tests/tool_parsers/test_llama3_json_tool_parser.py":
        {"parser": "llama3_json", "template": L + "meta-llama-Llama-3.1-8B-Instruct.jinja"},
    "tests/tool_parsers/test_llama4_pythonic_tool_parser.py":
        {"parser": "llama4_pythonic", "template": V + "tool_chat_template_llama4_pythonic.jinja"},
    "tests/tool_parsers/test_longcat_tool_parser.py": {"parser": "longcat", "style": "longcat"},
    "tests/tool_parsers/test_minicpm5xml_tool_parser.py":
        {"parser": "minicpm5_xml", "style": "minicpm5"},
    "tests/tool_parsers/test_minimax_m2_tool_parser.py":
        {"parser": "minimax_m2", "template": L + "MiniMax-M2.jinja"},
    "tests/tool_parsers/test_minimax_m3_tool_parser.py":
        {"parser": "minimax_m3", "style": "minimax_m3"},
    "tests/tool_parsers/test_olmo3_tool_parser.py":
        {"parser": "olmo3", "template": "tests:learned/templates/tool_chat_template_olmo3.jinja"},
    "tests/tool_parsers/test_phi4mini_tool_parser.py":
        {"parser": "phi4_mini_json", "template": V + "tool_chat_template_phi4_mini.jinja"},
    "tests/tool_parsers/test_poolside_v1_tool_parser.py":
        {"parser": "poolside_v1", "style": "poolside_v1"},
    "tests/tool_parsers/test_pythonic_tool_parser.py":
        {"parser": "pythonic", "template": V + "tool_chat_template_llama3.2_pythonic.jinja"},
    "tests/tool_parsers/test_qwen3coder_tool_parser.py":
        {"parser": "qwen3_coder", "template": L + "Qwen3-Coder.jinja"},
    "tests/tool_parsers/test_step3_tool_parser.py": {"parser": "step3", "style": "step3"},
    "tests/tool_parsers/test_step3p5_tool_parser.py":
        {"parser": "step3p5", "template": L + "StepFun3.5-Flash.jinja"},
    "tests/tool_parsers/test_xlam_tool_parser.py":
        {"parser": "xlam", "template": V + "tool_chat_template_xlam_llama.jinja"},
}

F = "test/registered/unit/function_call/"
SGLANG_FILES = {
    F + "test_deepseekv3_detector.py":
        {"parser": "deepseekv3", "template": V + "tool_chat_template_deepseekv3.jinja"},
    F + "test_mistral_detector.py": {"parser": None, "by_id": {
        "::TestMistralDetector::":
            {"parser": "mistral", "template": L + "mistralai-Mistral-Nemo-Instruct-2407.jinja"},
        "::TestMistralDetector::test_compact_format":
            {"template": L + "Mistral-Small-3.2-24B-Instruct-2506.jinja"},
    }},
    F + "test_hermes_detector.py":
        {"parser": "hermes", "template": L + "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"},
    F + "test_kimik2_detector.py":
        {"parser": "kimi_k2", "template": L + "Kimi-K2-Instruct.jinja"},
    F + "test_llama32_detector.py":
        {"parser": "llama3", "template": L + "meta-llama-Llama-3.2-3B-Instruct.jinja"},
    F + "test_qwen25_detector.py":
        {"parser": "qwen25", "template": L + "Qwen-Qwen2.5-7B-Instruct.jinja"},
    # one file, a class per detector: each class's cases on its family's template
    F + "test_function_call_parser.py": {"parser": None, "by_id": {
        "::TestPythonicDetector::":
            {"parser": "pythonic", "template": V + "tool_chat_template_llama4_pythonic.jinja"},
        "::TestMistralDetector::":
            {"parser": "mistral", "template": L + "mistralai-Mistral-Nemo-Instruct-2407.jinja"},
        "::TestMistralDetector::test_detect_and_parse_compact_args_format":
            {"template": L + "Mistral-Small-3.2-24B-Instruct-2506.jinja"},
        "::TestLlama32Detector::":
            {"parser": "llama3", "template": L + "meta-llama-Llama-3.2-3B-Instruct.jinja"},
        "::TestKimiK2Detector::":
            {"parser": "kimi_k2", "template": L + "Kimi-K2-Instruct.jinja"},
        "::TestDeepSeekV32Detector::":
            {"parser": "deepseekv32", "template": L + "DeepSeek-V3.2.jinja"},
        "::TestDeepSeekV4Detector::": {"parser": "deepseekv4", "style": "deepseek_v4"},
        "::TestQwen3CoderDetector::":
            {"parser": "qwen3_coder", "template": L + "Qwen3-Coder.jinja"},
        "::TestTopLevelCompositeToolSchema::test_qwen3_coder":
            {"parser": "qwen3_coder", "template": L + "Qwen3-Coder.jinja"},
        "::TestGlm4MoeDetector::": {"parser": "glm45", "template": L + "GLM-4.6.jinja"},
        "::TestGlm47MoeDetector::":
            {"parser": "glm47", "template": L + "GLM-4.7-Flash.jinja"},
        "::TestLfm2Detector::": {"parser": "lfm2", "template": L + "LFM2.5-Instruct.jinja"},
        "::TestGigaChat3Detector::":
            {"parser": "gigachat3", "template": L + "GigaChat3-10B-A1.8B.jinja"},
        "::TestGigaChat3Detector::test_detect_and_parse_function_call_marker":
            {"template": L + "GigaChat3.1-10B-A1.8B.jinja"},
        "::TestQwen25Detector::":
            {"parser": "qwen25", "template": L + "Qwen-Qwen2.5-7B-Instruct.jinja"},
        "::TestGemma4Detector::":
            {"parser": "gemma4", "template": L + "google-gemma-4-31B-it.jinja"},
    }},
    # the detector files read later: a case already read above keeps its id there
    F + "test_pythonic_detector.py":
        {"parser": "pythonic", "template": V + "tool_chat_template_llama3.2_pythonic.jinja"},
    F + "test_qwen3_coder_detector.py":
        {"parser": "qwen3_coder", "template": L + "Qwen3-Coder.jinja"},
    F + "test_glm4_moe_detector.py": {"parser": "glm45", "template": L + "GLM-4.6.jinja"},
    # GLM-4.7's file checks GLM-4.5's detector too, in the tests named for it
    F + "test_glm47_moe_detector.py": {"parser": "glm47", "template": L + "GLM-4.7-Flash.jinja",
                                       "by_id": {
        "::test_whitespace_preserved_in_string_args_glm4":
            {"parser": "glm45", "template": L + "GLM-4.6.jinja"},
        "::test_whitespace_preserved_in_string_args_glm47":
            {"parser": "glm47", "template": L + "GLM-4.7-Flash.jinja"},
        "::test_glm4_detector_": {"parser": "glm45", "template": L + "GLM-4.6.jinja"},
    }},
    F + "test_minimax_m2_detector.py":
        {"parser": "minimax_m2", "template": L + "MiniMax-M2.jinja"},
    F + "test_gptoss_detector.py":
        {"parser": "gpt-oss", "template": L + "openai-gpt-oss-120b.jinja"},
    F + "test_lfm2_detector.py": {"parser": "lfm2", "template": L + "LFM2.5-Instruct.jinja"},
    # SGLang's `hunyuan` reads Hy3's calls; its `:opensource` case on the template that writes them
    F + "test_hunyuan_detector.py": {"parser": "hunyuan", "style": "hy3", "by_id": {
        "::test_hy4_format_without_tool_separator":
            {"template": "tests:llama_cpp/templates/tencent-Hy3.jinja"},
    }},
    # MiMo's detector reads Qwen3-Coder's XML; the corpus's MiMo-VL template writes JSON calls
    F + "test_mimo_detector.py": {"parser": "mimo", "style": "qwen3_coder"},
    F + "test_dots_detector.py": {"parser": "dots", "style": "dots"},
    F + "test_minicpm5_detector.py":
        {"parser": "minicpm5", "template": "tests:llama_cpp/templates/openbmb-MiniCPM5-1B.jinja"},
    F + "test_poolside_v1_detector.py": {"parser": "poolside_v1", "style": "poolside_v1"},
    F + "test_step3p5_detector.py": {"parser": "step3p5", "template": L + "StepFun3.5-Flash.jinja",
                                     "by_id": {
        # its second parse is by the Qwen3-Coder detector, for contrast
        "::test_qwen_parser_does_not_gain_step_repair#2":
            {"parser": "qwen3_coder", "template": L + "Qwen3-Coder.jinja"},
    }},
    F + "test_gigachat3_detector.py":
        {"parser": "gigachat3", "template": L + "GigaChat3-10B-A1.8B.jinja"},
    F + "test_step3_detector.py": {"parser": "step3", "style": "step3"},
}



def set_up_env(function, evaluator):
    """What a unittest `setUp` assigns to `self.X`, as `self.X` names."""
    env = {}
    for statement in function.body:
        if isinstance(statement, ast.Assign):
            target = statement.targets[0]
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                try:
                    env[f"self.{target.attr}"] = evaluator.ev(statement.value, env)
                except Exception:
                    pass
    return env


def dedupe(cases):
    seen = set()
    out = []
    for case in cases:
        key = json.dumps([case["parser"], case["output"], case["expect"], case["tools"]],
                         sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(case)
    return out


def main():
    global wider
    peer, source = sys.argv[1], Path(sys.argv[2])
    wider = WIDER_READING[peer]
    files = VLLM_FILES if peer == "vllm" else SGLANG_FILES
    cases = []
    for relative, spec in files.items():
        path = source / relative
        if not path.exists():
            print(f"missing {path}", file=sys.stderr)
            continue
        found = read_file(path, f"{peer}/{relative}")
        for case in found:
            parser, template, style = spec["parser"], spec.get("template"), spec.get("style")
            for needle, override in spec.get("by_id", {}).items():
                if needle in case["id"]:
                    parser = override.get("parser", parser)
                    template = override.get("template", template)
                    style = override.get("style", style)
            if parser is None:
                continue
            line = {"id": case["id"], "parser": parser, "template": template,
                    "style": None if template else style, "tools": case["tools"],
                    "output": case["output"], "expect": case["expect"]}
            if case["xfail"]:
                line["peer_xfail"] = case["xfail"]
            cases.append(line)
        print(f"{relative}: {len(found)} cases", file=sys.stderr)
    cases = dedupe(cases)
    seen = {}
    for case in cases:
        count = seen[case["id"]] = seen.get(case["id"], 0) + 1
        if count > 1:
            case["id"] += f"#{count}"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with open(OUT_DIR / f"{peer}.jsonl", "w") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {OUT_DIR / (peer + '.jsonl')}", file=sys.stderr)


if __name__ == "__main__":
    main()
