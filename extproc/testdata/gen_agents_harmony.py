#!/usr/bin/env python3
"""Regenerates testdata/agents_harmony_golden.json: /v1/responses and
/v1/messages bodies and the prompt token ids vLLM 0.33.0 computes for each
on a GPT-OSS model, by vLLM's own code:

- Responses: ResponsesRequest validates the body and
  OnlineRenderer.render_responses renders it; for a gpt_oss model that is
  its Harmony path (_render_responses_with_harmony: build_harmony_preamble,
  response_input_to_harmony, render_for_completion through oss-harmony), no
  stored conversation and no tool server.
- Messages: AnthropicMessagesRequest validates the body,
  AnthropicServingMessages.to_chat_completion_request converts it with the
  merge_inline_system and disabled-thinking effort vLLM probes from the same
  renderer (_should_merge_inline_system, DisabledThinkingEffortResolver with
  "auto"), and OnlineRenderer.render_chat renders the chat request (Harmony
  for gpt_oss).

The model directory, Harmony vocabulary and start date come from
tokenizer/testdata/gen_vllm.py (imported), so both goldens see the same
engine. A body vLLM rejects is recorded with "error".

Usage (the same environment as gen_vllm.py):
    VLLM_TARGET_DEVICE=cpu python extproc/testdata/gen_agents_harmony.py WORKDIR
"""
import asyncio
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tokenizer", "testdata"))
import gen_vllm  # noqa: E402

T_WEATHER = {"type": "function", "name": "get_weather", "description": "Weather for a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                             "unit": {"type": "string", "enum": ["c", "f"]}},
                            "required": ["city"]}}
T_SEARCH = {"type": "function", "name": "search", "parameters": {"type": "object", "properties": {
    "q": {"type": "string"}, "k": {"type": "integer", "default": 5}, "fresh": {"type": "boolean"}}}}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\": 21}"}
REASON = {"type": "reasoning", "id": "rs_1", "summary": [],
          "content": [{"type": "reasoning_text", "text": "Check the weather."}]}
AMSG = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
        "content": [{"type": "output_text", "text": "It is 21 C.", "annotations": []}]}
U = {"role": "user", "content": "Weather in Paris?"}

RESPONSES = {
    "string_input": {"input": "Hello!"},
    "empty_string_input": {"input": ""},
    "instructions": {"instructions": "Be brief.", "input": "Hi"},
    "empty_instructions": {"instructions": "", "input": "Hi"},
    "instructions_and_system_item": {"instructions": "Top.", "input": [{"role": "system", "content": "Item."}, U]},
    "system_item_as_instructions": {"input": [{"role": "system", "content": "Sys rules."}, U]},
    "developer_item_parts": {"input": [{"role": "developer", "content": [
        {"type": "input_text", "text": "Dev "}, {"type": "input_text", "text": "rules"}]}, U]},
    "later_system_item": {"input": [U, {"role": "system", "content": "Reminder"}, {"role": "user", "content": "Q2"}]},
    "empty_later_developer": {"input": [U, {"role": "developer", "content": ""}]},
    "easy_messages": {"input": [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                                {"role": "user", "content": "Q2"}]},
    "typed_parts": {"input": [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Describe"}, {"type": "input_text", "text": "briefly"}]}]},
    "special_token_text": {"input": "literal <|start|> and <|end|> and <|call|>"},
    "effort_low": {"reasoning": {"effort": "low"}, "input": "Think a little."},
    "effort_high": {"reasoning": {"effort": "high"}, "input": "Think hard."},
    "effort_none": {"reasoning": {"effort": "none"}, "input": "No thinking."},
    "tools": {"tools": [T_WEATHER, T_SEARCH], "input": [U]},
    "tools_with_instructions": {"instructions": "Use tools.", "tools": [T_WEATHER], "input": "Weather?"},
    "tool_no_parameters": {"tools": [{"type": "function", "name": "now", "parameters": None}], "input": "Time?"},
    "function_call_roundtrip": {"tools": [T_WEATHER], "input": [U, CALL, OUT]},
    "reasoning_call_output": {"tools": [T_WEATHER], "input": [U, REASON, CALL, OUT]},
    "two_calls": {"tools": [T_WEATHER, T_SEARCH], "input": [
        {"role": "user", "content": "Both"}, CALL,
        dict(CALL, call_id="call_2", name="search", arguments="{\"q\": \"x\"}"),
        OUT, dict(OUT, call_id="call_2", output="found")]},
    "output_without_call": {"tools": [T_WEATHER], "input": [U, OUT]},
    "reasoning_then_answer": {"input": [U, REASON, AMSG, {"role": "user", "content": "And tomorrow?"}]},
    "reasoning_two_texts": {"input": [U, dict(REASON, content=[{"type": "reasoning_text", "text": "a"},
                                                                {"type": "reasoning_text", "text": "b"}])]},
    "reasoning_summary_only": {"input": [U, {"type": "reasoning", "id": "rs_2", "summary": [
        {"type": "summary_text", "text": "S"}]}, AMSG, {"role": "user", "content": "Q2"}]},
    "multi_turn_dropped_analysis": {"tools": [T_WEATHER], "input": [
        U, REASON, CALL, OUT, AMSG, {"role": "user", "content": "Thanks"},
        dict(REASON, id="rs_3", content=[{"type": "reasoning_text", "text": "Reply."}])]},
    "assistant_parts": {"input": [U, dict(AMSG, content=[{"type": "output_text", "text": "It is ", "annotations": []},
                                                         {"type": "output_text", "text": "21.", "annotations": []}]),
                                  {"role": "user", "content": "ok"}]},
    "web_search_tool": {"tools": [{"type": "web_search_preview"}], "input": "Search the news."},
    "unicode": {"instructions": "Réponds en français — «ok»", "input": "  中文 👍🏽 \u00a0 "},
}

A_TOOLS = [
    {"name": "get_weather", "description": "Weather for a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {
         "type": "array", "items": {"type": "integer"}}}, "required": ["city"]}},
]
USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21 C"}

MESSAGES = {
    "plain": {"messages": [{"role": "user", "content": "Hi"}]},
    "system_string": {"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]},
    "system_blocks": {"system": [{"type": "text", "text": "A."}, {"type": "text", "text": "B."}],
                      "messages": [{"role": "user", "content": "Hi"}]},
    "text_blocks": {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                              {"type": "text", "text": "b"}]}]},
    "multi_turn": {"messages": [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                                {"role": "user", "content": "Q2"}]},
    "tools": {"tools": A_TOOLS, "messages": [{"role": "user", "content": "Weather?"}]},
    "tool_roundtrip": {"tools": A_TOOLS, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, USE]},
        {"role": "user", "content": [RESULT]}]},
    "thinking_enabled": {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1024},
                         "messages": [{"role": "user", "content": "Deep"}]},
    "thinking_disabled": {"thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Quick"}]},
    "thinking_history": {"messages": [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Hmm.", "signature": "s"},
                                          {"type": "text", "text": "A"}]},
        {"role": "user", "content": "Q2"}]},
}


def short(e):
    return gen_vllm.short(e)


async def responses_case(online, body):
    from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
    from vllm.entrypoints.serve.engine.protocol import ErrorResponse
    body = dict(body, model="m")
    try:
        res = await online.render_responses(ResponsesRequest.model_validate(json.loads(json.dumps(body))))
    except Exception as e:
        return {"body": body, "error": short(e)}
    if isinstance(res, ErrorResponse):
        return {"body": body, "error": "ErrorResponse: " + res.error.message[:200]}
    return {"body": body, "ids": list(res.engine_input["prompt_token_ids"])}


async def messages_case(online, body):
    from vllm.entrypoints.anthropic.protocol import AnthropicMessagesRequest
    from vllm.entrypoints.anthropic.serving import AnthropicServingMessages, DisabledThinkingEffortResolver
    from vllm.entrypoints.serve.engine.protocol import ErrorResponse
    body = {"max_tokens": 64, **body, "model": "m"}
    try:
        req = AnthropicMessagesRequest.model_validate(json.loads(json.dumps(body)))
        effort = await DisabledThinkingEffortResolver(online, "auto").resolve_for(req)
        chat = AnthropicServingMessages.to_chat_completion_request(
            req, merge_inline_system=AnthropicServingMessages._should_merge_inline_system(online),
            disabled_thinking_effort=effort)
        res = await online.render_chat(chat)
    except Exception as e:
        return {"body": body, "error": short(e)}
    if isinstance(res, ErrorResponse):
        return {"body": body, "error": "ErrorResponse: " + res.error.message[:200]}
    return {"body": body, "ids": list(res[1][0]["prompt_token_ids"])}


def main():
    workdir = os.path.abspath(sys.argv[1])
    os.environ["VLLM_SYSTEM_START_DATE"] = gen_vllm.START_DATE
    gen_vllm.harmony_vocab(workdir)
    import vllm
    from vllm import AsyncEngineArgs
    from vllm.config import DeviceConfig, VllmConfig
    from vllm.renderers import renderer_from_config
    from vllm.renderers.online_renderer import OnlineRenderer
    src, cfg = gen_vllm.FAMILIES["gptoss"]
    mc = AsyncEngineArgs(model=gen_vllm.model_dir(workdir, "gptoss", src, cfg)).create_model_config()
    vc = VllmConfig(model_config=mc, device_config=DeviceConfig(device="cpu"))
    online = OnlineRenderer(mc, renderer_from_config(vc), request_logger=None, chat_template=None,
                            chat_template_content_format="auto", enable_auto_tools=True)
    out = {"vllm_version": vllm.__version__, "harmony_start_date": gen_vllm.START_DATE, "family": "gptoss",
           "responses": {k: asyncio.run(responses_case(online, v)) for k, v in RESPONSES.items()},
           "messages": {k: asyncio.run(messages_case(online, v)) for k, v in MESSAGES.items()}}
    for api in ("responses", "messages"):
        print(api, sum("ids" in c for c in out[api].values()), "rendered,",
              sum("error" in c for c in out[api].values()), "errors", file=sys.stderr)
    with open(os.path.join(HERE, "agents_harmony_golden.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
