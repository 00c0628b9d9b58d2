#!/usr/bin/env python3
"""Regenerates testdata/sglang_golden.json by running SGLang's own request
preprocessing: each case is an OpenAI request body, validated by SGLang's
pydantic request models (ChatCompletionRequest, CompletionRequest from
sglang.srt.entrypoints.openai.protocol) and turned into the prompt ids its
engine receives by the code its HTTP server runs:
  - chat: OpenAIServingChat._validate_request and
    _convert_to_internal_request (its _process_messages and
    _apply_jinja_template: message model_dump, tool-call argument parsing,
    content-part flattening, tool-message normalisation, the trailing
    assistant message handling, continue_final_message, reasoning_effort and
    chat_template_kwargs, the model's template through transformers, BOS
    handling), with the TemplateManager SGLang builds at start-up (content
    format detection, conversation-template guess from the model path);
  - completions: OpenAIServingCompletion._convert_to_internal_request and
    TokenizerManager._tokenize_texts, which encodes the first prompt.
The golden holds the prompt token ids SGLang computed, or the error it
raised (the server answers those with a 400).

The request shapes are gen_vllm.py's (imported, so both goldens cover the
same bodies), plus a few whose SGLang handling differs from vLLM's.

No weights and no GPU: each family is a directory with the cached tokenizer
files and a config.json naming the architecture. SGLang's serving modules
import its model-execution stack at module import, so these modules are
stubbed (an import finder hands out inert placeholders) because none of
them is on the chat rendering path: torch, torchvision, torchaudio, triton,
sgl_kernel, tvm_ffi (GPU kernels and tensors), compressed_tensors
(quantisation) and xgrammar (constrained decoding, used only with a
--tool-call-parser, which the goldens do not set). The rendering code itself
(protocol models, serving_chat, template_manager, jinja_template_utils,
transformers' apply_chat_template, tokenizers) is SGLang's and Hugging
Face's real code.

Usage (from the repository root, after the tokenizer files are cached):
    pip download sglang==0.5.23 --no-deps -d DIR && unzip DIR/sglang-*.whl -d DIR/src
    pip install --target DIR/pylib transformers==5.19.0 tokenizers==0.23.2 \\
        openai==2.8.0 openai-harmony==0.0.4 jinja2 pydantic fastapi orjson msgspec \\
        partial_json_parser numpy pillow psutil jsonschema requests pyzmq aiohttp \\
        uvloop setproctitle pybase64 packaging einops dill sentencepiece gguf
    PYTHONPATH=DIR/src:DIR/pylib python tokenizer/testdata/gen_sglang.py WORKDIR
WORKDIR receives the model directories.
"""
import abc
import asyncio
import importlib.abc
import importlib.machinery
import json
import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sglang_golden.json")
sys.path.insert(0, HERE)
from gen_vllm import CACHE, CHAT, COMPLETION, FAMILIES, SMALL, TOOLS, U  # noqa: E402

# Modules stubbed: none renders or tokenizes a prompt (see the header).
STUBBED = ("torch", "torchvision", "torchaudio", "triton", "sgl_kernel", "tvm_ffi", "compressed_tensors",
           "xgrammar")
# Device back ends SGLang probes with hasattr at import: absent.
ABSENT = {"torch.npu", "torch.musa", "torch.mlu", "torch.hpu"}
# Values SGLang reads at import to pick a device: no ROCm, no CUDA. The
# version is below what transformers accepts, so transformers runs as it
# does without torch (tokenizers and templates only).
VALUES = {"torch.version.hip": None, "torch.version.cuda": None}
STUB_VERSION = "2.0.0"

_CLASSES = {}


def _any_schema(cls, source, handler):
    from pydantic_core import core_schema
    return core_schema.any_schema()


class _AnyMeta(abc.ABCMeta):
    def __getattr__(cls, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return _Any(cls.__qualname__ + "." + k)


def _stub_class(name):
    """A placeholder class: stubbed types appear as bases and annotations."""
    c = _CLASSES.get(name)
    if c is None:
        c = _CLASSES[name] = _AnyMeta(name.rsplit(".", 1)[-1], (), {
            "__init__": lambda s, *a, **k: None,
            "__getattr__": lambda s, k: _lookup(name, k),
            "__qualname__": name,
            "__init_subclass__": classmethod(lambda cls, **k: None),
            "__class_getitem__": classmethod(lambda cls, k: cls),
            "__get_pydantic_core_schema__": classmethod(_any_schema)})
    return c


def _lookup(prefix, k):
    if k.startswith("__") and k.endswith("__") or prefix + "." + k in ABSENT:
        raise AttributeError(k)
    if prefix + "." + k in VALUES:
        return VALUES[prefix + "." + k]
    if k[:1].isupper():
        return _stub_class(prefix + "." + k)
    return _Any(prefix + "." + k)


class _Any:
    """Any other attribute of a stubbed module: callable (as a decorator it
    returns what it decorates), falsy, zero, empty."""

    def __init__(self, name):
        self._n = name

    def __getattr__(self, k):
        return _lookup(self._n, k)

    def __call__(self, *a, **k):
        if len(a) == 1 and callable(a[0]) and not k:
            return a[0]
        return _Any(self._n + "()")

    def __getitem__(self, k):
        return _Any(self._n + "[]")

    def __mro_entries__(self, bases):
        return (_stub_class(self._n),)

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    __index__ = __int__

    def __float__(self):
        return 0.0

    def __len__(self):
        return 0

    def __contains__(self, o):
        return False

    def __eq__(self, o):
        return self is o

    def __hash__(self):
        return id(self)

    def __lt__(self, o):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __add__(self, o):
        return self

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __or__ = __ror__ = __add__

    def __neg__(self):
        return self

    __pos__ = __invert__ = __neg__

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Mod(types.ModuleType):
    def __getattr__(self, k):
        return _lookup(self.__name__, k)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _Mod(spec.name)
        m.__path__ = []
        m.__version__ = STUB_VERSION
        return m

    def exec_module(self, m):
        pass


# Shapes whose SGLang handling differs from vLLM's, beyond gen_vllm.py's.
EXTRA_CHAT = {
    "trailing_assistant": {"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]},
    "trailing_assistant_parts": {"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]},
    "continue_no_flag": {"continue_final_message": True, "messages": [
        {"role": "user", "content": "Write a haiku."}, {"role": "assistant", "content": "Autumn moon rises"}]},
    "kwargs_add_generation_prompt_false": {"chat_template_kwargs": {"add_generation_prompt": False},
                                           "messages": [{"role": "user", "content": "Hi"}]},
    "kwargs_reasoning_effort": {"chat_template_kwargs": {"reasoning_effort": "low"},
                                "messages": [{"role": "user", "content": "Think a bit."}]},
    "tool_parts_with_string": {"tools": TOOLS, "messages": [
        U, {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": ["21", {"type": "text", "text": "sunny"}]}]},
    "null_content_user": {"messages": [{"role": "user", "content": None}]},
    "kwargs_documents": {"chat_template_kwargs": {"documents": [{"title": "Doc A", "text": "Alpha."}]},
                         "messages": [{"role": "user", "content": "Summarise the documents."}]},
    "tool_choice_function": {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "search"}},
                             "messages": [U]},
    "tool_choice_required": {"tools": TOOLS, "tool_choice": "required", "messages": [U]},
    "assistant_thinking_part": {"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hello."}]},
        {"role": "user", "content": "Bye"}]},
    "image_part": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]}]},
    "uppercase_role": {"messages": [{"role": "System", "content": "Be brief."}, {"role": "user", "content": "Hi"}]},
}
EXTRA_COMPLETION = {
    "prompt_empty_list_text": {"prompt": ""},
}


def model_dir(workdir, name, src, cfg):
    # A neutral directory name: SGLang guesses a conversation template from
    # the model path, and real paths of these families match none.
    d = os.path.join(workdir, "models", "m-" + name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(os.path.join(CACHE, src)):
        shutil.copy(os.path.join(CACHE, src, f), d)
    json.dump({**SMALL, **cfg}, open(os.path.join(d, "config.json"), "w"))
    return d


def short(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


class Engine:
    """SGLang's serving objects for one model, as its HTTP server builds
    them, without the scheduler: a TokenizerManager holding the tokenizer
    (built without its __init__, which starts the IPC to the scheduler)."""

    def __init__(self, path):
        from sglang.srt import runtime_context
        from sglang.srt.configs.model_config import ModelConfig
        from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
        from sglang.srt.entrypoints.openai.serving_completions import OpenAIServingCompletion
        from sglang.srt.managers.tokenizer_manager import TokenizerManager
        from sglang.srt.parser.template_manager import TemplateManager
        from sglang.srt.server_args import ServerArgs
        from sglang.srt.utils.hf_transformers.tokenizer import get_tokenizer

        sa = ServerArgs(model_path=path, device="cpu")
        sa.resolve_once()
        runtime_context._CONTEXT.set_server_args(sa)
        tm = TokenizerManager.__new__(TokenizerManager)
        tm.server_args = sa
        tm.model_path = path
        tm.served_model_name = sa.served_model_name
        tm.model_config = ModelConfig.from_server_args(sa)
        tm.processor = None
        tm.async_dynamic_batch_tokenizer = None
        serving, model = runtime_context.get_serving(), runtime_context.get_model()
        # As TokenizerManager.__init__ loads it.
        tm.tokenizer = get_tokenizer(serving.tokenizer_path, tokenizer_mode=serving.tokenizer_mode,
                                     trust_remote_code=model.trust_remote_code, revision=model.revision,
                                     tokenizer_backend=serving.tokenizer_backend)
        tm.request_logger = None
        self.tm = tm
        templates = TemplateManager()
        templates.initialize_templates(tm, model_path=path)
        self.chat = OpenAIServingChat(tm, templates)
        self.completion = OpenAIServingCompletion(tm, templates)

    def render(self, kind, body):
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, CompletionRequest
        try:
            if kind == "chat":
                req = ChatCompletionRequest.model_validate({"model": "m", **body})
                err = self.chat._validate_request(req)
                if err:
                    return {"error": "ValidationError: " + err[:200]}
                gen, _ = self.chat._convert_to_internal_request(req)
                if gen.input_ids is None:
                    return {"error": "NoIDs: the engine would tokenize the text itself"}
                return {"ids": [int(i) for i in gen.input_ids]}
            req = CompletionRequest.model_validate({"model": "m", **body})
            err = self.completion._validate_request(req)
            if err:
                return {"error": "ValidationError: " + err[:200]}
            gen, _ = self.completion._convert_to_internal_request(req)
            if gen.text is None:
                return {"error": "NoText: prompt given as ids"}
            text = gen.text if isinstance(gen.text, str) else gen.text[0]
            ids, _ = asyncio.run(self.tm._tokenize_texts(text))
            return {"ids": [int(i) for i in ids]}
        except Exception as e:  # the server answers these with a 400
            return {"error": short(e)}


def main():
    sys.meta_path.insert(0, _Finder())
    workdir = os.path.abspath(sys.argv[1])
    import sglang
    import transformers

    chat = {**CHAT, **EXTRA_CHAT}
    completion = {**COMPLETION, **EXTRA_COMPLETION}
    cases = [{"name": n, "kind": "chat", "request": b} for n, b in chat.items()]
    cases += [{"name": n, "kind": "completion", "request": b} for n, b in completion.items()]
    out = {"sglang_version": sglang.__version__, "transformers_version": transformers.__version__,
           "stubbed_modules": list(STUBBED), "cases": cases, "families": {}}
    for name, (src, cfg) in FAMILIES.items():
        eng = Engine(model_dir(workdir, name, src, cfg))
        res = {}
        for c in cases:
            res[c["name"]] = eng.render(c["kind"], json.loads(json.dumps(c["request"])))
        out["families"][name] = res
        print(name, sum("ids" in r for r in res.values()), "rendered,",
              sum("error" in r for r in res.values()), "errors", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
