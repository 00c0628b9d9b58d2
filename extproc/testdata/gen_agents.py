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
  merge_inline_system=False and disabled_thinking_effort="none" ("messages";
  the conversion with merge_inline_system=True is "merged_messages" when it
  differs). Both settings are vLLM's probes of the served template; "probes"
  holds, per family, what vLLM's own probes decide:
  AnthropicServingMessages._detect_merge_inline_system on the templates
  resolve_chat_template picks without tools and with tools, and
  DisabledThinkingEffortResolver._probe with a renderer whose render_chat is
  the render below. Each family's tokens use its own probes.

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
# Families whose template vLLM probes differently (gemma3 and llama2 reject a
# system message after the first): their probes are recorded, and the shapes
# in PROBE_SHAPES rendered with them.
PROBE_FAMILIES = ["gemma3", "llama2", "deepseek_v3"]
# Families probed only, not rendered: transformers 5.x loads deepseek_v3's
# tokenizer so that it splits plain words ("Be brief." as B/eb/rief/.), unlike
# its tokenizer.json; its probes do not depend on the encoding.
PROBE_ONLY = ["deepseek_v3"]
PROBE_SHAPES = ["inline_system", "inline_system_blocks", "inline_system_billing", "inline_system_only_billing",
                "system_string", "thinking_disabled", "thinking_disabled_effort", "multi_turn"]
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
DEFER = {"name": "lookup", "description": "Deferred", "defer_loading": True,
         "input_schema": {"type": "object", "properties": {"k": {"type": "string"}}}}
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
    "input_schema_without_type": {"tools": [{"name": "t", "input_schema": {"properties": {"a": {"type": "integer"}}}},
                                            {"name": "u", "input_schema": {}}],
                                  "messages": [{"role": "user", "content": "x"}]},
    "defer_loading_tool": {"tools": A_TOOLS + [DEFER], "messages": [{"role": "user", "content": "x"}]},
    "duplicate_tool_names_kept": {"tools": [A_TOOLS[0], dict(A_TOOLS[0], description="again")],
                                  "messages": [{"role": "user", "content": "x"}]},
    "tool_addition_reference": {"tools": A_TOOLS + [DEFER], "messages": [
        {"role": "user", "content": "Q"},
        {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "lookup"}}]},
        {"role": "user", "content": "Q2"}]},
    "tool_addition_definition": {"tools": A_TOOLS, "messages": [
        {"role": "system", "content": [
            {"type": "text", "text": "New tool. "},
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": {
                "name": "calc", "description": "Math", "input_schema": {"properties": {"e": {"type": "string"}}}}}},
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": dict(A_TOOLS[1], description="Replaced")}}]},
        {"role": "user", "content": "Q"}]},
    "tool_removal": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Q"},
        {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}]},
        {"role": "user", "content": "Q2"}]},
    "tool_removal_then_addition": {"tools": A_TOOLS, "messages": [
        {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "search"}}]},
        {"role": "user", "content": "Q"},
        {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "search"}}]},
        {"role": "user", "content": "Q2"}]},
    "tool_addition_without_tools": {"messages": [
        {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_definition",
                                                                          "definition": A_TOOLS[0]}}]},
        {"role": "user", "content": "Q"}]},
    "tool_addition_undeclared_rejected": {"tools": A_TOOLS, "messages": [
        {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "nope"}}]},
        {"role": "user", "content": "Q"}]},
    "tool_addition_in_user_rejected": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "search"}}]}]},
    "tool_removal_definition_rejected": {"tools": A_TOOLS, "messages": [
        {"role": "system", "content": [{"type": "tool_removal", "tool": {"type": "tool_definition", "definition": A_TOOLS[0]}}]},
        {"role": "user", "content": "Q"}]},
    "tool_addition_without_tool_rejected": {"messages": [
        {"role": "system", "content": [{"type": "tool_addition"}]}, {"role": "user", "content": "Q"}]},
    "assistant_tool_result_list": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "it's \"quoted\"\n\ttab \\ é \u00a0 \u200b 👍"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]},
        {"role": "user", "content": "Q2"}]},
    "assistant_tool_result_values": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "text", "text": "Before."}, {"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "it's", "n": 1, "f": 1.5, "g": 1e20, "h": 1e-7, "z": 0.0, "big": 123456789012345678901234567890,
             "t": True, "no": None, "l": [1, "a'b\"c"], "d": {}}]}]},
        {"role": "user", "content": "Q2"}]},
    "assistant_tool_result_empty_list": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}]}]},
    "user_tool_result_text_and_images": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Shot?"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [dict(RESULT, content=[
            {"type": "text", "text": "a"}, {"type": "image", "source": {"type": "url", "url": "http://example.invalid/b.png"}},
            {"type": "text", "text": "b"}, {"type": "tool_reference", "tool_name": "search"}]),
            {"type": "text", "text": "Look"}]}]},
    "inline_system_blocks": {"system": [{"type": "text", "text": "Top. "}], "messages": [
        {"role": "user", "content": "Q1"},
        {"role": "system", "content": [{"type": "text", "text": "R1 "}, {"type": "text", "text": "R2"}]},
        {"role": "assistant", "content": "A1"},
        {"role": "system", "content": "Later."},
        {"role": "user", "content": "Q2"}]},
    "inline_system_billing": {"messages": [
        {"role": "user", "content": "Q1"},
        {"role": "system", "content": "x-anthropic-billing-header: cch=1"},
        {"role": "system", "content": [{"type": "text", "text": "x-anthropic-billing-header: y"},
                                       {"type": "text", "text": "Kept"}]},
        {"role": "user", "content": "Q2"}]},
    "inline_system_only_billing": {"system": "Top.", "messages": [
        {"role": "user", "content": "Q1"},
        {"role": "system", "content": "x-anthropic-billing-header: cch=1"},
        {"role": "user", "content": "Q2"}]},
    "thinking_disabled_effort": {"thinking": {"type": "disabled"}, "output_config": {"effort": "high"},
                                 "messages": [{"role": "user", "content": "Quick"}]},
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
    for fam in FAMILIES + PROBE_FAMILIES:
        d = os.path.join(CACHE, fam)
        if os.path.exists(os.path.join(d, "tokenizer.json")):
            tok = AutoTokenizer.from_pretrained(d)
            if tok.chat_template:  # a family without a template has no chat to probe
                out[fam] = tok
    return out


def render_text(fam, messages, tool_dicts, kwargs):
    """The prompt vLLM's renderer makes of a chat request for one family."""
    from vllm.renderers.chat_utils.chat_message import parse_chat_messages
    from vllm.renderers.hf import resolve_chat_template_content_format, safe_apply_chat_template
    mc = _ModelConfig()
    tok = TOKENIZERS[fam]
    fmt = resolve_chat_template_content_format(None, tool_dicts, "auto", tok, model_config=mc)
    conv, _, _ = parse_chat_messages(json.loads(json.dumps(messages)), mc, fmt)
    return safe_apply_chat_template(mc, tok, conv, tools=tool_dicts, tokenize=False, **kwargs)


class _ProbeRenderer:
    """The renderer DisabledThinkingEffortResolver probes: render_chat of a
    ChatCompletionRequest is the render above, with the request's own
    build_chat_params."""

    def __init__(self, fam):
        self.fam = fam
        self.model_config = _ModelConfig()

    async def render_chat(self, request):
        params = request.build_chat_params(None, "auto")
        text = render_text(self.fam, [m for m in request.messages], None, dict(params.chat_template_kwargs))
        ids = TOKENIZERS[self.fam](text, add_special_tokens=False).input_ids
        return None, ({"type": "token", "prompt": text, "prompt_token_ids": ids},)


def probes(fam):
    """What vLLM's /v1/messages serving decides by probing fam's template."""
    import asyncio
    from vllm.entrypoints.anthropic.serving import DisabledThinkingEffortResolver
    from vllm.renderers.hf import resolve_chat_template
    tok = TOKENIZERS[fam]
    merge = any(AnthropicServingMessages._detect_merge_inline_system(
        resolve_chat_template(tok, None, tools, model_config=_ModelConfig())) for tools in (None, []))
    effort = asyncio.run(DisabledThinkingEffortResolver(_ProbeRenderer(fam))._probe())
    return {"merge_inline_system": merge, "disabled_thinking_effort": effort}


def render(messages, tool_dicts, kwargs, families=None):
    """The token ids vLLM's renderer makes of a chat request, per family."""
    from vllm.renderers.chat_utils.chat_message import parse_chat_messages
    from vllm.renderers.hf import resolve_chat_template_content_format, safe_apply_chat_template
    mc = _ModelConfig()
    out = {}
    for fam, tok in TOKENIZERS.items():
        if fam not in (families or FAMILIES):
            continue
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


def messages_case(name, body):
    body = {"max_tokens": 64, **body, "model": MODEL}
    try:
        req = AnthropicMessagesRequest.model_validate(json.loads(json.dumps(body)))
        chat = AnthropicServingMessages.to_chat_completion_request(
            req, merge_inline_system=False, disabled_thinking_effort="none")
    except Exception as e:
        return {"body": body, "error": str(e).splitlines()[0]}
    merged = AnthropicServingMessages.to_chat_completion_request(
        AnthropicMessagesRequest.model_validate(json.loads(json.dumps(body))),
        merge_inline_system=True, disabled_thinking_effort="none")
    tool_dicts = [t.model_dump() for t in chat.tools] if chat.tools else None
    tools = [strip_none(t) for t in tool_dicts] if tool_dicts else None
    case = {"body": body, "messages": plain(chat.messages), "tools": tools,
            "reasoning_effort": chat.reasoning_effort, "chat_template_kwargs": chat.chat_template_kwargs,
            "stream": bool(chat.stream),
            "include_usage": bool(chat.stream_options and chat.stream_options.include_usage)}
    if plain(merged.messages) != case["messages"]:
        case["merged_messages"] = plain(merged.messages)
    if has_image(case["messages"]):
        return case
    case["tokens"] = {}
    for fam in TOKENIZERS:
        if fam in PROBE_ONLY or fam not in FAMILIES and name not in PROBE_SHAPES:
            continue
        p = PROBES[fam]
        chat = AnthropicServingMessages.to_chat_completion_request(
            AnthropicMessagesRequest.model_validate(json.loads(json.dumps(body))),
            merge_inline_system=p["merge_inline_system"], disabled_thinking_effort=p["disabled_thinking_effort"])
        tool_dicts = [t.model_dump() for t in chat.tools] if chat.tools else None
        params = chat.build_chat_params(None, "auto")
        case["tokens"].update(render(plain(chat.messages), tool_dicts, dict(params.chat_template_kwargs), [fam]))
    return case


TOKENIZERS = {}
PROBES = {}


def main():
    TOKENIZERS.update(tokenizers())
    PROBES.update({fam: probes(fam) for fam in TOKENIZERS})
    out = {"families": sorted(f for f in TOKENIZERS if f in FAMILIES),
           "probe_families": sorted(f for f in TOKENIZERS if f not in FAMILIES + PROBE_ONLY),"vllm_version": "0.33.0",
           "responses": {k: responses_case(v) for k, v in RESPONSES.items()},
           "probes": PROBES,
           "messages": {k: messages_case(k, v) for k, v in MESSAGES.items()}}
    with open(os.path.join(HERE, "agents_golden.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
