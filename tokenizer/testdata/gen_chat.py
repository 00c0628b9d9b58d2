#!/usr/bin/env python3
"""Regenerates testdata/chat_golden.json: chat templates from the families'
tokenizer_config.json rendered by Python jinja2 the way transformers does
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols,
tojson without ASCII escaping or key sorting, raise_exception, strftime_now
fixed to 2025-03-07 so output is deterministic), after the content steps
vLLM 0.33.0 takes before rendering (its parse_chat_message_content, restated
here for content only): a missing or null content becomes "" for a template
that reads message content as a string (vLLM's "auto" content format, decided
on the template's syntax tree) and [] for one that loops over it; for a string
template a list content becomes the "\n"-joined non-empty text of its text
parts (a bare string is a text part); for a looping template a bare string in
a list becomes a {"type": "text", "text": ...} part. Each message keeps
only the fields vLLM copies (rebuild below). Then, as its
_postprocess_messages does, an assistant's empty tool_calls list is removed
and each call's function.arguments string is parsed as JSON ({} when it is
not JSON; {} too for arguments neither a string, an object nor a list).

Usage (from the repository root, after the tokenizer files are cached):
    pip install 'jinja2==3.1.6'
    python3 tokenizer/testdata/gen_chat.py
"""
import json
import os
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", ".cache", "tokenizers")
FAMILIES = ["llama3", "qwen3", "gemma3", "deepseek_v3"]
NOW = datetime(2025, 3, 7, 12, 30, 0)

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city — «quoted» ü",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "k": {"type": "integer"}}}}},
]

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}

CASES = {
    "single_user": {"messages": [{"role": "user", "content": "Hello! How are you?"}]},
    "system_user": {"messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 2+2?"}]},
    "multi_turn": {"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke about caches.\n\nMake it short."}]},
    "no_generation_prompt": {"add_generation_prompt": False, "messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."}]},
    "unicode_whitespace": {"messages": [
        {"role": "user", "content": "  padded\tcontent with 中文, emoji 👍🏽 and \u00a0nbsp  \n"}]},
    "thinking_history": {"messages": [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "<think>\nreasoning here\n</think>\n\nA1"},
        {"role": "user", "content": "Q2"}]},
    "enable_thinking_false": {"chat_template_kwargs": {"enable_thinking": False},
                              "messages": [{"role": "user", "content": "Quick answer please"}]},
    "tools": {"tools": TOOLS, "messages": [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": "Weather in Paris?"}]},
    "tool_call_roundtrip": {"tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
        {"role": "user", "content": "Thanks!"}]},
    "content_parts": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "Describe this."},
                                     {"type": "text", "text": " Please."}]}]},
    "missing_content": {"messages": [
        {"role": "user", "content": "Call it."},
        {"role": "assistant", "tool_calls": [CALL]},
        {"role": "user", "content": "Again."}]},
    "null_content_no_tools": {"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "Still there?"}]},
    "string_in_content_list": {"messages": [
        {"role": "user", "content": ["Describe this.", {"type": "text", "text": "Please."}]}]},
    "empty_text_part": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""},
                                     {"type": "text", "text": "b"}]}]},
    "tool_call_compact_arguments": {"tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [dict(CALL, function={
            "name": "get_weather", "arguments": "{\"city\":\"Paris\",\"unit\":\"c\"}"})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"}]},
    "tool_call_invalid_arguments": {"tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            dict(CALL, function={"name": "get_weather", "arguments": "city=Paris"}),
            dict(CALL, id="call_2", function={"name": "search", "arguments": None}),
            dict(CALL, id="call_3", function={"name": "search", "arguments": {"q": "x", "k": 2}})]},
        {"role": "user", "content": "Go on."}]},
    "empty_tool_calls": {"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "tool_calls": []},
        {"role": "user", "content": "Bye"}]},
    "reasoning_fields": {"tools": TOOLS, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "reasoning": "Look it up.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"},
        {"role": "assistant", "content": "21 C.", "reasoning_content": "dropped by vLLM", "extra": 1}]},
    "roles_not_alternating": {"messages": [
        {"role": "user", "content": "one"}, {"role": "user", "content": "two"}]},
}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def special_tokens(cfg):
    out = {}
    for k in ["bos_token", "eos_token", "unk_token", "pad_token"]:
        v = cfg.get(k)
        if isinstance(v, dict):
            v = v.get("content")
        if v is not None:
            out[k] = v
    return out


def is_content(n):
    return ((isinstance(n, nodes.Getitem) and isinstance(n.arg, nodes.Const) and n.arg.value == "content")
            or (isinstance(n, nodes.Getattr) and n.attr == "content"))


def content_format(env, src):
    """'openai' when the template loops over a message's content (directly or
    through a variable set from it), else 'string'."""
    tree = env.parse(src)
    assigned = {a.target.name for a in tree.find_all(nodes.Assign)
                if isinstance(a.target, nodes.Name) and is_content(a.node)}
    for loop in tree.find_all(nodes.For):
        if is_content(loop.iter) or (isinstance(loop.iter, nodes.Name) and loop.iter.name in assigned):
            return "openai"
    return "string"


TEXT_KEYS = {"text": "text", "input_text": "text", "output_text": "text",
             "refusal": "refusal", "thinking": "thinking"}


def part_text(p):
    if isinstance(p, str):
        return p
    key = TEXT_KEYS.get(p.get("type", "text"))
    return p.get(key) if key else None


def rebuild(m):
    """The fields vLLM keeps of a message, in its order."""
    out = {"role": m["role"], "content": m["content"]}
    if m["role"] == "assistant":
        if m.get("tool_calls") is not None:
            out["tool_calls"] = list(m["tool_calls"])
        if m.get("reasoning") is not None:
            out["reasoning"] = out["reasoning_content"] = m["reasoning"]
    elif m["role"] == "tool" and "tool_call_id" in m:
        out["tool_call_id"] = m["tool_call_id"]
    for key in ("name", "task"):
        if isinstance(m.get(key), str):
            out[key] = m[key]
    if m["role"] == "developer":
        out["tools"] = m.get("tools")
    return out


def vllm_messages(messages, fmt):
    out = []
    for m in messages:
        c = m.get("content")
        if c is None:
            m = dict(m, content="" if fmt == "string" else [])
        elif isinstance(c, list) and fmt == "string":
            m = dict(m, content="\n".join(t for t in map(part_text, c) if t))
        elif isinstance(c, list):
            m = dict(m, content=[{"type": "text", "text": p} if isinstance(p, str) else p for p in c])
        out.append(rebuild(m))
    for m in out:
        calls = m.get("tool_calls")
        if m["role"] != "assistant" or not isinstance(calls, list):
            continue
        if not calls:
            del m["tool_calls"]
            continue
        m["tool_calls"] = calls = [dict(c, function=dict(c["function"])) for c in calls]
        for c in calls:
            args = c["function"].get("arguments")
            if isinstance(args, str):
                try:
                    c["function"]["arguments"] = json.loads(args)
                except json.JSONDecodeError:
                    c["function"]["arguments"] = {}
            elif not isinstance(args, (dict, list)):
                c["function"]["arguments"] = {}
    return out


def render(tmpl, cfg, case, fmt):
    kwargs = dict(special_tokens(cfg))
    kwargs.update(case.get("chat_template_kwargs", {}))
    messages = vllm_messages(case["messages"], fmt)
    return tmpl.render(messages=messages, tools=case.get("tools"), documents=None,
                       add_generation_prompt=case.get("add_generation_prompt", True), **kwargs)


def main():
    env = environment()
    out = {"jinja2_version": jinja2.__version__, "cases": [], "families": {}}
    for name, case in CASES.items():
        out["cases"].append({"name": name, "request": json.dumps(case, ensure_ascii=False)})
    for fam in FAMILIES:
        cfg = json.load(open(os.path.join(CACHE, fam, "tokenizer_config.json"), encoding="utf-8"))
        tmpl = env.from_string(cfg["chat_template"])
        fmt = content_format(env, cfg["chat_template"])
        results = {"_content_format": {"text": fmt}}
        for name, case in CASES.items():
            try:
                results[name] = {"text": render(tmpl, cfg, case, fmt)}
            except Exception as e:  # the Go side must fail too
                results[name] = {"error": f"{type(e).__name__}: {e}"}
        out["families"][fam] = results
    with open(os.path.join(HERE, "chat_golden.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
