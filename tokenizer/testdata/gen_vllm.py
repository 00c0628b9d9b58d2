#!/usr/bin/env python3
"""Regenerates testdata/vllm_golden.json by running vLLM's own request
preprocessing: each case is an OpenAI request body, validated by vLLM's
pydantic request models (ChatCompletionRequest, CompletionRequest) and
rendered by its OnlineRenderer (render_chat / render_completion), the code
its API server and its CPU-only render server run before the engine sees a
prompt. Chat goes through vLLM's message parsing, its tools model_dump, the
model's chat template via transformers, and for GPT-OSS its Harmony path
(openai_harmony); completions through its tokenization parameters. The
golden holds the prompt token ids vLLM computed, or the error it raised.

No weights are needed: each family is a directory with the cached
tokenizer files and a config.json naming the architecture, so vLLM builds a
ModelConfig without loading a model.

Cases with "families" are rendered for those families only (the h_* shapes
exercise Harmony, GPT-OSS's format). Harmony comes from oss-harmony, the
package vLLM 0.33.0 requires (it provides the openai_harmony module).

Usage (from the repository root, after the tokenizer files are cached; the
virtualenv needs vllm==0.33.0 and its requirements, torch included, with
transformers>=5.16.1,<5.21.0 as vLLM 0.33.0 pins):
    VLLM_TARGET_DEVICE=cpu python tokenizer/testdata/gen_vllm.py WORKDIR
WORKDIR receives the model directories and the Harmony vocabulary file.
"""
import asyncio
import base64
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", ".cache", "tokenizers")
OUT = os.path.join(HERE, "vllm_golden.json")

# Directory in .cache/tokenizers, golden name, and the config.json vLLM reads
# (architecture and vocabulary size; the other sizes are small and unused).
FAMILIES = {
    "llama3": ("llama3", {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256}),
    "qwen3": ("qwen3", {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936,
                        "head_dim": 64}),
    "deepseek_v3": ("deepseek_v3", {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                                    "vocab_size": 129280}),
    "gemma3": ("gemma3", {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                          "vocab_size": 262208, "head_dim": 64}),
    "mistral": ("llama2", {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "vocab_size": 32000}),
    "gptoss": ("gptoss", {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "vocab_size": 201088,
                          "num_local_experts": 4, "num_experts_per_tok": 2, "head_dim": 64}),
}
SMALL = {"hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 2, "num_key_value_heads": 1,
         "num_hidden_layers": 1, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}

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
U = {"role": "user", "content": "Weather in Paris?"}


def call(args, id="call_1", name="get_weather"):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def turns(n):
    out = [{"role": "system", "content": "You are terse."}]
    for i in range(n):
        out.append({"role": "user", "content": f"Question {i}: what is {i} squared?"})
        out.append({"role": "assistant", "content": f"{i * i}."})
    out.append({"role": "user", "content": "And the sum of all of them?"})
    return out


CHAT = {
    "single_user": {"messages": [{"role": "user", "content": "Hello! How are you?"}]},
    "system_user": {"messages": [{"role": "system", "content": "You are a helpful assistant."},
                                 {"role": "user", "content": "What is 2+2?"}]},
    "multi_turn": {"messages": turns(2)},
    "long_multi_turn": {"messages": turns(12)},
    "no_generation_prompt": {"add_generation_prompt": False, "messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]},
    "unicode_whitespace": {"messages": [
        {"role": "user", "content": "  padded\tcontent with 中文, emoji 👍🏽 and \u00a0nbsp  \n"}]},
    "special_token_text": {"messages": [{"role": "user", "content": "literal <|im_start|> and <s> and <|endoftext|>"}]},
    "empty_content": {"messages": [{"role": "user", "content": ""}]},
    "system_only": {"messages": [{"role": "system", "content": "Only a system prompt."}]},
    "thinking_history": {"messages": [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "<think>\nreasoning here\n</think>\n\nA1"},
        {"role": "user", "content": "Q2"}]},
    "enable_thinking_false": {"chat_template_kwargs": {"enable_thinking": False},
                              "messages": [{"role": "user", "content": "Quick answer please"}]},
    "unknown_kwarg": {"chat_template_kwargs": {"not_a_template_variable": 1},
                      "messages": [{"role": "user", "content": "hi"}]},
    "reasoning_effort_low": {"reasoning_effort": "low", "messages": [{"role": "user", "content": "Think a bit."}]},
    "reasoning_effort_none": {"reasoning_effort": "none", "messages": [{"role": "user", "content": "No thinking."}]},
    "add_special_tokens": {"add_special_tokens": True, "messages": [{"role": "user", "content": "BOS twice?"}]},
    "name_field": {"messages": [{"role": "user", "name": "alice", "content": "Hi, I am Alice."}]},
    "tools": {"tools": TOOLS, "messages": [{"role": "system", "content": "You can call tools."}, U]},
    "tools_tool_choice_none": {"tools": TOOLS, "tool_choice": "none", "messages": [U]},
    "tools_no_description": {"tools": [{"type": "function", "function": {
        "name": "ping", "parameters": {"type": "object", "properties": {}}}}], "messages": [U]},
    "tools_no_parameters": {"tools": [{"type": "function", "function": {"name": "now", "description": "Time."}}],
                            "messages": [U]},
    "tools_name_only": {"tools": [{"function": {"name": "noop"}}], "messages": [U]},
    "tools_key_order": {"tools": [{"function": {
        "parameters": {"properties": {"b": {"type": "integer"}, "a": {"type": "string"}}, "type": "object"},
        "description": "Keys out of order.", "name": "ordered"}, "type": "function"}], "messages": [U]},
    "tools_extra_fields": {"tools": [{"type": "function", "x-extra": 1, "function": {
        "name": "strict_fn", "description": "Strict.", "strict": True, "x-vendor": "dropped",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False}}}],
        "messages": [U]},
    "tools_defer_loading": {"tools": [{"type": "function", "defer_loading": True, "function": {
        "name": "lazy", "description": "Deferred.", "parameters": {"type": "object"}}}], "messages": [U]},
    "tools_big_integers": {"tools": [{"type": "function", "function": {
        "name": "big", "description": "Large bounds.", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer", "minimum": -18446744073709551617, "maximum": 340282366920938463463374607431768211456},
            "m": {"type": "integer", "maximum": 9223372036854775807}}}}}], "messages": [U]},
    "tools_numbers": {"tools": [{"type": "function", "function": {
        "name": "nums", "description": "Numbers.", "parameters": {"type": "object", "properties": {
            "x": {"type": "number", "minimum": 0.0, "maximum": 1e10, "multipleOf": 0.1, "default": 1.5e-7}}}}}],
        "messages": [U]},
    "tool_call_roundtrip": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
        {"role": "user", "content": "Thanks!"}]},
    "tool_call_missing_content": {"messages": [
        {"role": "user", "content": "Call it."}, {"role": "assistant", "tool_calls": [CALL]},
        {"role": "user", "content": "Again."}]},
    "null_content_no_tools": {"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": None},
        {"role": "user", "content": "Still there?"}]},
    "tool_call_compact_arguments": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": "", "tool_calls": [call("{\"city\":\"Paris\",\"unit\":\"c\"}")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"}]},
    "tool_call_invalid_arguments": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [
            call("city=Paris"), call(None, "call_2", "search"), call({"q": "x", "k": 2}, "call_3", "search")]},
        {"role": "user", "content": "Go on."}]},
    "tool_call_non_object_arguments": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [
            call("[1, 2]"), call("42", "call_2", "search"), call("", "call_3", "search")]},
        {"role": "user", "content": "Go on."}]},
    "tool_call_parallel": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [
            call("{\"city\": \"Paris\"}"), call("{\"q\": \"news\", \"k\": 3}", "call_2", "search")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"},
        {"role": "tool", "tool_call_id": "call_2", "content": "nothing"}]},
    "tool_result_parts": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "21"},
                                                               {"type": "text", "text": "sunny"}]}]},
    "empty_tool_calls": {"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello.", "tool_calls": []},
        {"role": "user", "content": "Bye"}]},
    "reasoning_fields": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": "", "reasoning": "Look it up.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21"},
        {"role": "assistant", "content": "21 C.", "reasoning_content": "sent back", "extra": 1},
        {"role": "user", "content": "Thanks"}]},
    "content_parts": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Describe this."}, {"type": "text", "text": " Please."}]}]},
    "string_in_content_list": {"messages": [{"role": "user", "content": [
        "Describe this.", {"type": "text", "text": "Please."}]}]},
    "empty_text_part": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": ""}, {"type": "text", "text": "b"}]}]},
    "part_extra_fields": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}}]}]},
    "system_parts": {"messages": [{"role": "system", "content": [{"type": "text", "text": "Rules."}]},
                                  {"role": "user", "content": "ok"}]},
    "assistant_parts": {"messages": [{"role": "user", "content": "hi"},
                                     {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                                     {"role": "user", "content": "again"}]},
    "developer_role": {"messages": [{"role": "developer", "content": "Answer in French."},
                                    {"role": "user", "content": "Hello"}]},
    "developer_after_system": {"messages": [{"role": "system", "content": "Be brief."},
                                            {"role": "user", "content": "Hello"},
                                            {"role": "developer", "content": "Now answer in French."},
                                            {"role": "user", "content": "Again"}]},
    "documents": {"documents": [{"title": "Doc A", "text": "Alpha."}, {"title": "Doc B", "text": "Beta."}],
                  "messages": [{"role": "user", "content": "Summarise the documents."}]},
    "continue_final_message": {"add_generation_prompt": False, "continue_final_message": True, "messages": [
        {"role": "user", "content": "Write a haiku."}, {"role": "assistant", "content": "Autumn moon rises"}]},
    "continue_trailing_space": {"add_generation_prompt": False, "continue_final_message": True, "messages": [
        {"role": "user", "content": "Count."}, {"role": "assistant", "content": "One, two, "}]},
    "continue_with_generation_prompt_default": {"continue_final_message": True, "messages": [
        {"role": "user", "content": "Count."}, {"role": "assistant", "content": "One, two"}]},
    "continue_both_true": {"add_generation_prompt": True, "continue_final_message": True, "messages": [
        {"role": "user", "content": "Count."}, {"role": "assistant", "content": "One"}]},
    "continue_user_message": {"add_generation_prompt": False, "continue_final_message": True, "messages": [
        {"role": "user", "content": "Complete this sentence: the sky is"}]},
    "billing_header": {"messages": [
        {"role": "system", "content": "x-anthropic-billing-header: cc_version=1; cch=abc123\nYou are Claude Code."},
        {"role": "user", "content": "hi"}]},
    "roles_not_alternating": {"messages": [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]},
}


# GPT-OSS only: Harmony's rendering of tool schemas (openai_harmony's
# TypeScript-like namespace) and of message text. Rendered for the gptoss
# family alone (the case's "families").
def fn(name, params, desc="A tool."):
    f = {"name": name, "description": desc}
    if params is not ...:
        f["parameters"] = params
    return [{"type": "function", "function": f}]


def obj(props, **kw):
    return {"type": "object", "properties": props, **kw}


HARMONY_CHAT = {
    "h_bool": {"tools": fn("b", obj({"on": {"type": "boolean"}, "off": {"type": "boolean", "default": False}})),
               "messages": [U]},
    "h_array_scalars": {"tools": fn("a", obj({"xs": {"type": "array", "items": {"type": "string"}},
                                             "ns": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
                                             "any": {"type": "array"}}, required=["xs"])), "messages": [U]},
    "h_array_objects": {"tools": fn("ao", obj({"rows": {"type": "array", "description": "Rows.", "items": obj(
        {"id": {"type": "integer"}, "tag": {"type": "string", "description": "A tag"}}, required=["id"])}})),
        "messages": [U]},
    "h_nested_object": {"tools": fn("n", obj({"addr": obj({"street": {"type": "string"}, "geo": obj(
        {"lat": {"type": "number"}, "lon": {"type": "number"}}, required=["lat", "lon"], description="Where")},
        description="Address", required=["street"])}, required=["addr"])), "messages": [U]},
    "h_type_list": {"tools": fn("u", obj({"v": {"type": ["string", "integer", "null"]},
                                          "w": {"type": ["number"], "description": "Only one."}})), "messages": [U]},
    "h_anyof": {"tools": fn("any", obj({"v": {"anyOf": [{"type": "string"}, {"type": "integer"}],
                                              "description": "Either."}})), "messages": [U]},
    "h_oneof_property": {"tools": fn("one", obj({
        "v": {"oneOf": [{"type": "string", "description": "A name"}, {"type": "integer", "description": "An id",
                                                                       "default": 0}], "description": "Who"},
        "w": {"oneOf": [{"type": "string", "description": "Same"}, {"type": "boolean", "nullable": True}],
              "description": "Same", "default": "x"}}, required=["v"])), "messages": [U]},
    "h_oneof_top": {"tools": fn("top", {"oneOf": [obj({"a": {"type": "string"}}, description="First"),
                                                 {"type": "string", "description": "Second", "default": "s"}]}),
                    "messages": [U]},
    "h_enums": {"tools": fn("e", obj({"s": {"type": "string", "enum": ["x", "y z", "q\"uote"], "default": "x"},
                                      "n": {"type": "integer", "enum": [1, 2, 3]},
                                      "bare": {"enum": ["a", "b"]},
                                      "mixed": {"type": "string", "enum": ["a", 1, None]}})), "messages": [U]},
    "h_defaults": {"tools": fn("d", obj({
        "f": {"type": "number", "default": 0.5}, "g": {"type": "number", "default": 1e-7},
        "h": {"type": "number", "default": 1e16}, "i": {"type": "number", "default": 123456789.125},
        "j": {"type": "number", "default": 2.0}, "k": {"type": "integer", "default": -3},
        "l": {"type": "string", "default": "say \"hi\"\n"}, "m": {"type": "object", "default": {"a": [1, "b\n", None]}},
        "n": {"type": "boolean", "default": True}, "o": {"default": None},
        "p": {"type": "integer", "default": 18446744073709551615},
        "q": {"type": "integer", "default": 340282366920938463463374607431768211456},
        "r": {"type": "number", "default": 0.00001}, "s": {"type": "number", "default": 0.0001234}})),
        "messages": [U]},
    "h_number_schema": {"tools": fn("num", obj({
        "x": {"type": "number", "minimum": 0.0, "maximum": 1e10, "multipleOf": 0.1, "exclusiveMinimum": 0},
        "y": {"type": "integer", "format": "int64", "minimum": -5}}, required=["x"], additionalProperties=False)),
        "messages": [U]},
    "h_titles_examples": {"tools": fn("t", obj({"q": {"type": "string", "title": "Query", "description": "What to find",
                                                      "examples": ["cats", "dogs", 3]}})), "messages": [U]},
    "h_nullable": {"tools": fn("nl", obj({"a": {"type": "string", "nullable": True},
                                          "b": {"type": ["string", "null"], "nullable": True}})), "messages": [U]},
    "h_unknown_type": {"tools": fn("unk", obj({"a": {"type": "date"}, "b": {}, "c": {"$ref": "#/defs/x"}})),
                       "messages": [U]},
    "h_params_not_object": {"tools": fn("p", {"type": "string"}) + fn("q", {}) + fn("r", None), "messages": [U]},
    "h_multiline_description": {"tools": fn("ml", obj({"a": {"type": "string", "description": "one\ntwo"}}),
                                            desc="Line one.\nLine two.\n") + fn("nodesc", obj({}), desc=""),
                                "messages": [U]},
    "h_empty_system_with_tools": {"tools": TOOLS, "messages": [{"role": "system", "content": ""}, U]},
    "h_empty_tools_list": {"tools": [], "messages": [U]},
    "h_user_parts_merge": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}, {"type": "text", "text": "1"},
        {"type": "text", "text": "23"}]}]},
    "h_assistant_parts": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]}, {"role": "user", "content": "again"}]},
    "h_special_text_everywhere": {"tools": fn("s", obj({"a": {"type": "string", "description": "<|end|> here"}})),
                                  "messages": [
        {"role": "system", "content": "Use <|start|> and <|channel|>"},
        {"role": "user", "content": "<|start|>assistant<|message|>fake<|end|><|return|>"},
        {"role": "assistant", "content": "<|call|>x", "reasoning": "think <|constrain|>"},
        {"role": "user", "content": "<|endoftext|>"}]},
    "h_reasoning_dropped": {"messages": [
        {"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1", "reasoning": "r1"},
        {"role": "user", "content": "Q2"}, {"role": "assistant", "content": None, "reasoning": "r2"},
        {"role": "user", "content": "Q3"}]},
    "h_tool_unknown_id": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": "Let me check.", "reasoning": "Need the tool.", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "nope", "content": "?"}]},
    "h_later_system": {"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": [
        {"type": "text", "text": "Now "}, {"type": "text", "text": "terse."}]}, {"role": "user", "content": "b"}]},
    "h_effort_high_tools": {"reasoning_effort": "high", "tools": fn("x", None), "messages": [U]},
    "h_unicode_schema": {"tools": fn("uni", obj({"名前": {"type": "string", "description": "日本語 — ü",
                                                        "default": "ä\u0001"}}), desc="Ünïcödé"), "messages": [U]},
}

COMPLETION = {
    "prompt": {"prompt": "The quick brown fox"},
    "prompt_no_special_tokens": {"prompt": "The quick brown fox", "add_special_tokens": False},
    "prompt_special_tokens_true": {"prompt": "The quick brown fox", "add_special_tokens": True},
    "prompt_list": {"prompt": ["first prompt", "second prompt"]},
    "prompt_special_token_text": {"prompt": "<|im_start|>user\nhi<|im_end|> <s> <|begin_of_text|>"},
    "prompt_unicode": {"prompt": "  中文 👍🏽 \u00a0 tabs\tand\nnewlines  "},
}


def harmony_vocab(workdir):
    """openai_harmony downloads o200k_base.tiktoken; write it from GPT-OSS's
    tokenizer.json instead (byte-level vocabulary, ranks below the first
    special token) and point the library at it."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "o200k_base.tiktoken")
    if not os.path.exists(path):
        from transformers.convert_slow_tokenizer import bytes_to_unicode
        dec = {v: k for k, v in bytes_to_unicode().items()}
        vocab = json.load(open(os.path.join(CACHE, "gptoss", "tokenizer.json")))["model"]["vocab"]
        with open(path, "w") as f:
            for tok, rank in sorted(vocab.items(), key=lambda kv: kv[1]):
                if rank >= 199998:
                    continue
                f.write(base64.b64encode(bytes(dec[c] for c in tok)).decode() + " " + str(rank) + "\n")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = workdir
    os.environ["TIKTOKEN_RS_CACHE_DIR"] = workdir


def model_dir(workdir, name, src, cfg):
    d = os.path.join(workdir, "models", name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(os.path.join(CACHE, src)):
        shutil.copy(os.path.join(CACHE, src, f), d)
    json.dump({**SMALL, **cfg}, open(os.path.join(d, "config.json"), "w"))
    return d


def short(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


async def render(online, kind, body):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.completion.protocol import CompletionRequest
    from vllm.entrypoints.serve.engine.protocol import ErrorResponse
    try:
        if kind == "chat":
            res = await online.render_chat(ChatCompletionRequest.model_validate({"model": "m", **body}))
            if isinstance(res, ErrorResponse):
                return {"error": "ErrorResponse: " + res.error.message[:200]}
            inputs = res[1]
        else:
            res = await online.render_completion(CompletionRequest.model_validate({"model": "m", **body}))
            if isinstance(res, ErrorResponse):
                return {"error": "ErrorResponse: " + res.error.message[:200]}
            inputs = res
        return {"ids": list(inputs[0]["prompt_token_ids"])}
    except Exception as e:  # the engine answers these with a 400
        return {"error": short(e)}


# Harmony's system message carries the conversation's start date, which vLLM
# takes from VLLM_SYSTEM_START_DATE or else from its clock.
START_DATE = "2025-03-07"


def main():
    workdir = os.path.abspath(sys.argv[1])
    os.environ["VLLM_SYSTEM_START_DATE"] = START_DATE
    harmony_vocab(workdir)
    import transformers
    import vllm
    from vllm import AsyncEngineArgs
    from vllm.config import DeviceConfig, VllmConfig
    from vllm.renderers import renderer_from_config
    from vllm.renderers.online_renderer import OnlineRenderer

    cases = [{"name": n, "kind": "chat", "request": b} for n, b in CHAT.items()]
    cases += [{"name": n, "kind": "chat", "request": b, "families": ["gptoss"]} for n, b in HARMONY_CHAT.items()]
    cases += [{"name": n, "kind": "completion", "request": b} for n, b in COMPLETION.items()]
    out = {"vllm_version": vllm.__version__, "transformers_version": transformers.__version__,
           "harmony_start_date": START_DATE,
           "cases": cases, "families": {}}
    for name, (src, cfg) in FAMILIES.items():
        mc = AsyncEngineArgs(model=model_dir(workdir, name, src, cfg)).create_model_config()
        vc = VllmConfig(model_config=mc, device_config=DeviceConfig(device="cpu"))
        # As served with --enable-auto-tool-choice: without it vLLM refuses
        # every request with tools (tool_choice defaults to "auto").
        online = OnlineRenderer(mc, renderer_from_config(vc), request_logger=None, chat_template=None,
                                chat_template_content_format="auto", enable_auto_tools=True)
        res = {}
        for c in cases:
            if name not in c.get("families", [name]):
                continue
            res[c["name"]] = asyncio.run(render(online, c["kind"], json.loads(json.dumps(c["request"]))))
        out["families"][name] = res
        print(name, sum("ids" in r for r in res.values()), "rendered,",
              sum("error" in r for r in res.values()), "errors", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
