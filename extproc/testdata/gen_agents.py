#!/usr/bin/env python3
"""Regenerates testdata/agents_golden.json: /v1/responses and /v1/messages
request bodies and the chat request vLLM 0.33.0 builds from each, computed by
vLLM's own code (nothing restated here):

- Responses: the body is validated by vllm's ResponsesRequest (its
  input_item_parsing and tool checks run), then
  vllm.entrypoints.openai.responses.utils.construct_input_messages and
  construct_tool_dicts (the non-Harmony render path of
  OnlineRenderer.render_responses, without a previous response), and
  ResponsesRequest.build_chat_params for the template kwargs
  (add_generation_prompt, continue_final_message, reasoning_effort,
  enable_thinking).
- Messages: AnthropicMessagesRequest validates the body and
  AnthropicServingMessages.to_chat_completion_request converts it, with
  merge_inline_system=False and disabled_thinking_effort="none" (the values
  vLLM picks for a template that accepts inline system messages and honours
  reasoning_effort "none"; both are probes of the served template).

Then, for each family below whose tokenizer files are cached (.cache/tokenizers,
as for the chat goldens), the converted request is rendered and encoded by
vLLM's own renderer: parse_chat_messages (content format resolved by vLLM's
resolve_chat_template_content_format from "auto") and safe_apply_chat_template
with the tool dicts vLLM passes (model_dump of its tool models) and the
template kwargs its build_chat_params makes, then encoded without special
tokens, as vLLM encodes a rendered chat. Restated, not imported: vLLM's
ModelConfig is a stand-in whose every attribute is None (no model is loaded;
the text-only path reads no model setting), so shapes with images are not
rendered, and the Messages conversion runs with merge_inline_system=False.

A body vLLM rejects is recorded with "error" (the exception text).
Tool dicts are recorded without None values; the template sees vLLM's
model_dump of them with None values, which the chat tools normalisation
restores exactly as for a chat request.

Usage (a Python with vLLM 0.33.0's Python sources importable and its
requirements installed; no GPU needed, nothing is loaded):
    python3 extproc/testdata/gen_agents.py
"""
import json
import os

from vllm.entrypoints.anthropic.protocol import AnthropicMessagesRequest
from vllm.entrypoints.anthropic.serving import AnthropicServingMessages
from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
from vllm.entrypoints.openai.responses.utils import (construct_input_messages,
                                                     construct_tool_dicts)

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", ".cache", "tokenizers")
FAMILIES = ["qwen3", "llama3"]
MODEL = "m"

R_TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Weather for a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"type": "function", "name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
     "strict": True},
]

CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\": 21}"}
REASON = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Check the weather."}]}
AMSG = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is 21 C."}]}

RESPONSES = {
    "string_input": {"input": "Hello!"},
    "instructions": {"instructions": "Be brief.", "input": "Hi"},
    "empty_instructions": {"instructions": "", "input": "Hi"},
    "easy_messages": {"input": [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                                {"role": "user", "content": "Q2"}]},
    "typed_message_parts": {"input": [{"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": "Describe"},
                                                   {"type": "input_text", "text": "briefly"}]}]},
    "developer_and_system_roles": {"input": [{"role": "developer", "content": "Dev rules"},
                                             {"role": "system", "content": "Sys"},
                                             {"role": "user", "content": "Go"}]},
    "function_call_roundtrip": {"tools": R_TOOLS, "input": [{"role": "user", "content": "Weather in Paris?"}, CALL, OUT]},
    "two_calls_merge": {"tools": R_TOOLS, "input": [
        {"role": "user", "content": "Both"}, CALL,
        dict(CALL, call_id="call_2", name="search", arguments="{\"q\": \"x\"}"),
        OUT, dict(OUT, call_id="call_2", output="found")]},
    "reasoning_then_call": {"tools": R_TOOLS, "input": [{"role": "user", "content": "Weather?"}, REASON, CALL, OUT]},
    "reasoning_summary_only": {"input": [{"role": "user", "content": "Q"},
                                         {"type": "reasoning", "summary": [{"type": "summary_text", "text": "S"}]},
                                         AMSG, {"role": "user", "content": "Q2"}]},
    "reasoning_then_message": {"input": [{"role": "user", "content": "Q"}, REASON, AMSG, {"role": "user", "content": "Q2"}]},
    "message_then_reasoning": {"input": [{"role": "user", "content": "Q"}, AMSG, REASON, {"role": "user", "content": "Q2"}]},
    "assistant_string_after_call": {"tools": R_TOOLS, "input": [
        {"role": "user", "content": "Q"}, CALL, {"role": "assistant", "content": "Calling."}]},
    "output_message_list": {"input": [{"role": "user", "content": "Q"}, AMSG, {"role": "user", "content": "more"}]},
    "partial_assistant_continue": {"input": [{"role": "user", "content": "Write a poem"},
                                             dict(AMSG, status="in_progress",
                                                  content=[{"type": "output_text", "text": "Roses are"}])]},
    "partial_reasoning_continue": {"input": [{"role": "user", "content": "Q"}, dict(REASON, status="incomplete")]},
    "reasoning_effort": {"reasoning": {"effort": "low"}, "input": "Think a bit"},
    "reasoning_effort_none_kwargs": {"reasoning": {"effort": "none"}, "chat_template_kwargs": {"foo": 1},
                                     "input": "No thinking"},
    "reasoning_with_enable_thinking_kwarg": {"reasoning": {"effort": "high"},
                                             "chat_template_kwargs": {"enable_thinking": False}, "input": "x"},
    "tool_choice_none_keeps_tools": {"tools": R_TOOLS, "tool_choice": "none", "input": "No tools please"},
    "non_function_tools_dropped": {"tools": [{"type": "web_search_preview"}] + R_TOOLS[:1], "input": "Search"},
    "namespace_tools": {"tools": [{"type": "namespace", "name": "fs", "description": "Files",
                                   "tools": [{"type": "function", "name": "read",
                                              "parameters": {"type": "object", "properties": {}}}]}],
                        "input": [{"role": "user", "content": "read it"},
                                  dict(CALL, name="read", namespace="fs", arguments="{}")]},
    "function_call_output_list": {"tools": R_TOOLS, "input": [
        {"role": "user", "content": "Q"}, CALL,
        dict(OUT, output=[{"type": "input_text", "text": "21 C"}])]},
    "unicode": {"instructions": "Réponds en français — «ok»", "input": "中文 👍🏽"},
    "encrypted_reasoning_rejected": {"input": [{"role": "user", "content": "Q"},
                                               {"type": "reasoning", "summary": [], "encrypted_content": "xyz"}]},
    "item_reference_rejected": {"input": [{"type": "item_reference", "id": "msg_1"}]},
}

A_TOOLS = [
    {"name": "get_weather", "description": "Weather for a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "search", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}},
]
USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris", "unit": "c"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21 C"}

MESSAGES = {
    "string_content": {"messages": [{"role": "user", "content": "Hello!"}]},
    "system_string": {"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]},
    "system_blocks": {"system": [{"type": "text", "text": "Part one. "}, {"type": "text", "text": "Part two."}],
                      "messages": [{"role": "user", "content": "Hi"}]},
    "system_billing_header": {"system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=1; cch=abc"},
                                         {"type": "text", "text": "You are Claude Code."}],
                              "messages": [{"role": "user", "content": "Hi"}]},
    "multi_turn": {"messages": [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                                {"role": "user", "content": "Q2"}]},
    "text_blocks": {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                              {"type": "text", "text": "b"}]}]},
    "single_text_block": {"messages": [{"role": "user", "content": [{"type": "text", "text": "only"}]}]},
    "empty_text_block": {"messages": [{"role": "user", "content": [{"type": "text", "text": ""},
                                                                   {"type": "text", "text": "x"}]}]},
    "image_base64": {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "text", "text": "What is this?"}]}]},
    "image_url": {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "http://example.invalid/a.png"}},
        {"type": "text", "text": "And this?"}]}]},
    "tool_use_roundtrip": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check."}, USE]},
        {"role": "user", "content": [RESULT]}]},
    "tool_result_with_text": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT, {"type": "text", "text": "Thanks, and tomorrow?"}]}]},
    "tool_result_list_content": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [dict(RESULT, content=[{"type": "text", "text": "21"},
                                                           {"type": "text", "text": "sunny"}])]}]},
    "tool_result_image": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Shot?"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [dict(RESULT, content=[
            {"type": "text", "text": "screenshot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}])]}]},
    "tool_use_empty_input": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Search"},
        {"role": "assistant", "content": [dict(USE, name="search", input={})]},
        {"role": "user", "content": [dict(RESULT, content="")]}]},
    "parallel_tool_use": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Both"},
        {"role": "assistant", "content": [USE, dict(USE, id="toolu_2", name="search", input={"q": "ü"})]},
        {"role": "user", "content": [RESULT, dict(RESULT, tool_use_id="toolu_2", content="found")]}]},
    "thinking_blocks": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Let me think.", "signature": "s"},
                                          {"type": "text", "text": "A"}]},
        {"role": "user", "content": "Q2"}]},
    "redacted_thinking": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "opaque"},
                                          {"type": "text", "text": "A"}]},
        {"role": "user", "content": "Q2"}]},
    "thinking_disabled": {"thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Quick"}]},
    "thinking_enabled": {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048},
                         "messages": [{"role": "user", "content": "Deep"}]},
    "output_config_effort": {"output_config": {"effort": "high"}, "messages": [{"role": "user", "content": "Hard"}]},
    "inline_system": {"system": "Top.", "messages": [
        {"role": "user", "content": "Q1"}, {"role": "system", "content": "Reminder"},
        {"role": "user", "content": "Q2"}]},
    "assistant_tool_result_string": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "done"}]}]},
    "chat_template_kwargs": {"chat_template_kwargs": {"enable_thinking": False},
                             "messages": [{"role": "user", "content": "x"}]},
    "stream": {"stream": True, "messages": [{"role": "user", "content": "Stream it"}]},
    "unknown_block_rejected": {"messages": [{"role": "user", "content": [{"type": "video", "text": "x"}]}]},
}


def strip_none(x):
    if isinstance(x, dict):
        return {k: strip_none(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [strip_none(v) for v in x]
    return x


def plain(x):
    return json.loads(json.dumps(x, default=lambda o: o.model_dump(exclude_none=True)))


class _ModelConfig:
    """Stand-in for vllm.config.ModelConfig: every setting is None (off)."""

    def __getattr__(self, name):
        return None


def tokenizers():
    from transformers import AutoTokenizer
    out = {}
    for fam in FAMILIES:
        d = os.path.join(CACHE, fam)
        if os.path.exists(os.path.join(d, "tokenizer.json")):
            out[fam] = AutoTokenizer.from_pretrained(d)
    return out


def render(messages, tool_dicts, kwargs):
    """The token ids vLLM's renderer makes of a chat request, per family."""
    from vllm.renderers.chat_utils.chat_message import parse_chat_messages
    from vllm.renderers.hf import resolve_chat_template_content_format, safe_apply_chat_template
    mc = _ModelConfig()
    out = {}
    for fam, tok in TOKENIZERS.items():
        fmt = resolve_chat_template_content_format(None, tool_dicts, "auto", tok, model_config=mc)
        conv, _, _ = parse_chat_messages(json.loads(json.dumps(messages)), mc, fmt)
        try:
            text = safe_apply_chat_template(mc, tok, conv, tools=tool_dicts, tokenize=False, **kwargs)
        except Exception as e:  # the template refused the conversation
            out[fam] = {"error": str(e).splitlines()[0]}
            continue
        out[fam] = {"ids": tok(text, add_special_tokens=False).input_ids}
    return out


def has_image(messages):
    return "image_url" in json.dumps(messages)


def responses_case(body):
    body = dict(body, model=MODEL)
    try:
        # Validation rewrites input items in place: validate a copy.
        req = ResponsesRequest.model_validate(json.loads(json.dumps(body)))
        msgs = construct_input_messages(request_instructions=req.instructions, request_input=req.input)
        tools = construct_tool_dicts(req.tools, req.tool_choice)
        params = req.build_chat_params(None, "auto")
    except Exception as e:  # vLLM's rejection, recorded as such
        return {"body": body, "error": str(e).splitlines()[0]}
    case = {"body": body, "messages": plain(msgs), "tools": strip_none(plain(tools)) if tools else None,
            "chat_template_kwargs": plain(params.chat_template_kwargs)}
    case["tokens"] = render(plain(msgs), tools, dict(params.chat_template_kwargs))
    return case


def messages_case(body):
    body = {"max_tokens": 64, **body, "model": MODEL}
    try:
        req = AnthropicMessagesRequest.model_validate(json.loads(json.dumps(body)))
        chat = AnthropicServingMessages.to_chat_completion_request(
            req, merge_inline_system=False, disabled_thinking_effort="none")
    except Exception as e:
        return {"body": body, "error": str(e).splitlines()[0]}
    tool_dicts = [t.model_dump() for t in chat.tools] if chat.tools else None
    tools = [strip_none(t) for t in tool_dicts] if tool_dicts else None
    case = {"body": body, "messages": plain(chat.messages), "tools": tools,
            "reasoning_effort": chat.reasoning_effort, "chat_template_kwargs": chat.chat_template_kwargs,
            "stream": bool(chat.stream),
            "include_usage": bool(chat.stream_options and chat.stream_options.include_usage)}
    if not has_image(case["messages"]):
        params = chat.build_chat_params(None, "auto")
        case["tokens"] = render(case["messages"], tool_dicts, dict(params.chat_template_kwargs))
    return case


TOKENIZERS = {}


def main():
    TOKENIZERS.update(tokenizers())
    out = {"families": sorted(TOKENIZERS),"vllm_version": "0.33.0",
           "responses": {k: responses_case(v) for k, v in RESPONSES.items()},
           "messages": {k: messages_case(v) for k, v in MESSAGES.items()}}
    with open(os.path.join(HERE, "agents_golden.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
