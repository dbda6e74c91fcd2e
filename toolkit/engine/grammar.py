"""The grammar: what the model is *allowed* to write, token by token.

llama.cpp can mask every token that would break a GBNF grammar. We build one grammar per
(tools, tool_choice, parallel_tool_calls) from the tools' JSON Schemas, using
llama-cpp-python's own JSON-Schema-to-GBNF converter for the arguments and adding the few
rules of our calling convention around it:

    root  ::= calls | text                 tool_choice "auto"
    root  ::= calls                        "required", or a named function (one tool only)
    calls ::= "<tool_call>\\n" call "\\n</tool_call>" ("\\n<tool_call>\\n" call "\\n</tool_call>")*
    text  ::= [^<] ...                     plain text may not start with "<"

A grammar guarantees the reply *parses*. It cannot make a small model pick the right tool.
"""

from __future__ import annotations

import functools
import json

from llama_cpp.llama_grammar import LlamaGrammar, SchemaConverter

from toolkit.engine.template import CALL_CLOSE, CALL_OPEN

# JSON strings without raw control characters: the converter's default lets a model put a
# bare newline inside a string, which is not valid JSON.
_STRICT_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'


def call_schema(tools: list[dict]) -> dict:
    """One JSON Schema for "a call of one of these tools": name fixed, arguments per tool."""
    shapes = []
    for tool in tools:
        function = tool["function"]
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        shapes.append({
            "type": "object",
            "properties": {"name": {"const": function["name"]}, "arguments": parameters},
            "required": ["name", "arguments"],
        })
    return shapes[0] if len(shapes) == 1 else {"anyOf": shapes}


def _literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is also a valid GBNF literal here


def build_gbnf(tools: list[dict], mode: str, parallel: bool) -> str:
    """mode: "auto" (text or calls) or "required" (calls only)."""
    converter = SchemaConverter(prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(call_schema(tools), "tools")
    call_rule = converter.visit(schema, "call")
    if "char" in converter._rules:
        converter._rules["char"] = _STRICT_CHAR
    one_call = f"{_literal(CALL_OPEN + chr(10))} {call_rule} {_literal(chr(10) + CALL_CLOSE)}"
    rules = [converter.format_grammar()]
    rules.append(f"calls ::= {one_call}" + (f" ({_literal(chr(10))} {one_call})*" if parallel else ""))
    if mode == "auto":
        rules.append("root ::= calls | text")
        rules.append(r"text ::= [^<\x00] [^\x00]*")
    else:
        rules.append("root ::= calls")
    return "\n".join(rules)


@functools.lru_cache(maxsize=64)
def _cached(tools_json: str, mode: str, parallel: bool) -> LlamaGrammar:
    return LlamaGrammar.from_string(build_gbnf(json.loads(tools_json), mode, parallel), verbose=False)


def grammar_for(tools: list[dict], mode: str, parallel: bool) -> LlamaGrammar:
    """The grammar for these tools, built once per distinct schema and then reused."""
    return _cached(json.dumps(tools, sort_keys=True, ensure_ascii=False), mode, parallel)
