#!/usr/bin/env python3
"""Regenerates testdata/golden.json.gz: token ids from the reference Hugging
Face `tokenizers` (Rust) over a fixed corpus plus a seeded fuzz corpus.

Usage (from the repository root):
    pip install 'tokenizers==0.23.3'
    go test ./tokenizer -run TestFiles   # downloads the tokenizer files
    python3 tokenizer/testdata/gen_golden.py

The tokenizer files are read from .cache/tokenizers/<family>/ (see
tokenizer/files_test.go for how they are fetched from npm).
"""
import gzip
import json
import os
import random
import sys

import tokenizers
from tokenizers import Tokenizer

FAMILIES = ["llama3", "qwen3", "deepseek_v3", "gptoss", "gemma3", "llama2"]
HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", ".cache", "tokenizers")

SPECIALS = [
    "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|im_start|>",
    "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "<|endoftext|>",
    "<s>", "</s>", "<unk>", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",
    "<pad>", "<mask>", "<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
    "<｜fim▁hole｜>", "<|start|>", "<|message|>", "<|channel|>", "<|return|>",
]

HANDCRAFTED = [
    "", " ", "  ", "\n", "\r\n", "\t", "Hello, world!", "hello world",
    "  leading spaces", "trailing spaces   ", "a  b   c    d",
    "line one\nline two\r\nline three\rline four", "\n\n\n", " \n \n ",
    "tabs\tand\t\ttabs", "mixed \t\n whitespace \u00a0 here",
    "nbsp\u00a0between\u00a0words", "em\u2003space", "ideographic\u3000space",
    "\u3000\u3000leading ideographic", "end with nbsp\u00a0", "\u0085next line\u2028ls\u2029ps",
    "vertical\x0btab\x0cformfeed", "control\x00\x01\x02\x1b[0m\x7f chars",
    "cafe\u0301 vs caf\u00e9", "e\u0301\u0302\u0303 stacked marks", "\u0301 leading mark",
    "Ångström Å", "ﬁ ligature ﬀ", "emoji 😀 😃😄", "family 👨‍👩‍👧‍👦 zwj",
    "thumbs 👍🏽 👍🏿 skin tones", "flags 🇫🇷🇯🇵", "keycap 1️⃣ #️⃣",
    "中文测试，你好世界。", "日本語のテキスト、カタカナとひらがな", "한국어 텍스트입니다",
    "混合 mixed 中文 and English 123", "العربية نص تجريبي ١٢٣", "हिन्दी पाठ परीक्षण",
    "ภาษาไทยทดสอบ", "Ελληνικά κείμενο", "Русский текст проверка", "עברית טקסט",
    "12345678901234567890", "3.14159 2,718 1e10 0x1F", "٠١٢٣٤٥٦٧٨٩ ۱۲۳", "１２３４５ fullwidth",
    "Ⅻ roman ½ ¾ ²³", "I'M HERE, YOU'RE THERE, WE'VE, THEY'LL, HE'D, IT'S, DON'T",
    "i'm you're we've they'll he'd it's don't", "'s 't 're 've 'm 'll 'd",
    "'S 'T 'RE 'VE 'M 'LL 'D", "rock'n'roll o'clock", "don\u2019t smart quotes \u201chi\u201d",
    "long s: it'ſ ſ 'ſ", "Kelvin K and ß ẞ", "CamelCaseWord HTTPServer iPhone eBay",
    "ALLCAPS lowercase MiXeD", "snake_case_name __dunder__", "path/to/file.txt ../up //",
    "https://example.com/a?b=c&d=e#frag", "user@example.com", "$100.00 €50 ¥1000 £5",
    "a+b=c; x*y/z - w % 2 == 0", "!!!???...,,,;;;", "--- *** ### ```", "(((nested)))[[x]]{{y}}",
    "def f(x):\n    return x * 2\n\n\nclass A:\n\tpass\n",
    "for (int i = 0; i < n; i++) {\n  printf(\"%d\\n\", i);\n}\n",
    "SELECT * FROM t WHERE a = 'b' AND c <> 3;",
    "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
    "    indented code\n        more\n", "   \n   \n", "x\n \ny", "a \n\n b",
    "word.\nNext", "end.\r\n", "\r\r\n\n", " \r\n", "\t\n\t",
    "<|begin_of_text|>Hello<|eot_id|>", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "text <s> inside </s> text", "<bos><start_of_turn>user\nhi<end_of_turn>",
    "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜>", "<tool_call>{\"a\":1}</tool_call>",
    "<|start|>user<|message|>hi<|end|>", "<|endoftext|><|endoftext|>", "<<s>>", "<|im_start",
    "special<unk>token", "<think>\nreasoning\n</think>\n\nanswer",
    "▁ literal metaspace ▁▁", "\ufeffBOM at start", "zero\u200bwidth\u200cnon\u200djoiner",
    "soft\u00adhyphen", "rtl \u202eoverride\u202c", "replacement \ufffd char",
    "private \ue000 use", "astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚", "math ∑∫∂√∞ ≤≥≠", "box ─│┌┐ ░▒▓",
    "a" * 300, " " * 100, "ab" * 150 + " " + "xyz" * 40, "9" * 50, "\n" * 30,
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
]

WORDS = ("the of and to in is was that for on with as by at from it this be are "
         "have which an not or had but were their been has more one all would "
         "there they can will when who so about into time only new some could "
         "these two may first then do any like my now over such our man me even "
         "most made after also did many before must through back years where much "
         "your way well down should because each just those people how too little "
         "state good very make world still own see men work long get here between "
         "both life being under never day same another know while last might us "
         "great old year off come since against go came right used take three "
         "tokenizer router prefix cache engine request latency throughput model").split()


def prose(seed, n_words):
    rnd = random.Random(seed)
    out, sentence = [], 0
    for i in range(n_words):
        w = rnd.choice(WORDS)
        if sentence == 0:
            w = w.capitalize()
        if rnd.random() < 0.03:
            w = str(rnd.randint(0, 100000))
        out.append(w)
        sentence += 1
        if sentence > rnd.randint(6, 20):
            out[-1] += rnd.choice([".", ".", "!", "?", ";"])
            sentence = 0
            if rnd.random() < 0.2:
                out[-1] += "\n\n"
        elif rnd.random() < 0.08:
            out[-1] += ","
    return " ".join(out).replace("\n\n ", "\n\n")


POOL = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") * 4
    + list(" " * 30) + list("\t\n\r\n") * 3
    + list("'\"!?.,;:-_/\\()[]{}<>|@#$%^&*+=~`")
    + ["'s", "'S", "'t", "'re", "'VE", "'m", "'ll", "'D", "'ſ", "ſ", "\u212a"]
    + list("\u00a0\u2003\u3000\u0085\u2028\u200b\u200c\u200d\u00ad\ufeff\x0b\x0c\x00\x1b\x7f")
    + list("éüñçøåßÆŒ") + ["e\u0301", "\u0301", "\u0308", "\u20dd"]
    + list("中文字测试你好世界日本語ひらがなカタカナー한국어") + list("，。、「」！？")
    + list("العربيةहिन्दीภาษาไทยΕλληνικάРусский")
    + list("٠١٢١２３Ⅻ½²𝟘") + ["😀", "👍", "🏽", "👨‍👩‍👧", "🇫🇷", "1️⃣", "𝔘", "\ue000"]
    + ["▁", "\u202e", "\ufffd", "∑", "─"]
    + ["<s>", "</s>", "<|im_start|>", "<|endoftext|>", "<bos>", "<｜User｜>", "<|start|>", "<tool_call>"]
    + ["<", "|", ">", "<|", "|>", "<｜", "▁of▁"]
)


def fuzz(seed, count):
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        n = rnd.choice([1, 2, 3, 5, 8, 13, 21, 34])
        out.append("".join(rnd.choice(POOL) for _ in range(n)))
    return out


def corpus():
    texts = list(HANDCRAFTED)
    texts += SPECIALS
    texts += [" ".join(SPECIALS)]
    texts += [prose(s, 800) for s in range(3)]
    texts += fuzz(20240601, 3000)
    return texts


def main():
    texts = corpus()
    out = {"tokenizers_version": tokenizers.__version__, "texts": texts, "families": {}}
    for fam in FAMILIES:
        tok = Tokenizer.from_file(os.path.join(CACHE, fam, "tokenizer.json"))
        plain = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
        special = [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)]
        decoded = [tok.decode(ids, skip_special_tokens=False) for ids in plain]
        out["families"][fam] = {"plain": plain, "special": special, "decoded": decoded}
        print(fam, sum(map(len, plain)), "tokens", file=sys.stderr)
    path = os.path.join(HERE, "golden.json.gz")
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    print("wrote", path, os.path.getsize(path), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
