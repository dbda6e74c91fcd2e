"""The grammar: what the model is *allowed* to write, token by token.

llama.cpp can mask every token that would break a GBNF grammar. We build grammars from the
tools' JSON Schemas, using llama-cpp-python's own JSON-Schema-to-GBNF converter for the
arguments and adding the few rules of our calling convention around it. A whole reply obeys

    root  ::= calls | text                 tool_choice "auto"
    root  ::= calls                        "required", or a named function (one tool only)
    calls ::= "<tool_call>\\n" call "\\n</tool_call>" ("\\n<tool_call>\\n" call "\\n</tool_call>")*
    text  ::= [^<] ...                     plain text may not start with "<"

(``build_gbnf``). The engine does not hand the forks of that grammar to the model token by
token: it takes them itself by likelihood (``decide``), writes each ``<tool_call>`` opening
and lets the model write one call at a time under ``build_call_gbnf``. ``response_grammar``
does the same for ``response_format``: a text reply that must be JSON matching a schema, and
``text_grammar`` for a request's own ``grammar`` (GBNF text, as llama.cpp's server takes it).

A grammar guarantees the reply *parses*. It cannot make a small model pick the right tool.
"""

from __future__ import annotations

import functools
import json
import math
import re

from llama_cpp.llama_grammar import LlamaGrammar, SchemaConverter

from toolkit.engine.template import CALL_CLOSE, CALL_OPEN

# JSON strings without raw control characters: the converter's default lets a model put a
# bare newline inside a string, which is not valid JSON.
_STRICT_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'


# The keys of a JSON Schema whose values are schemas (or lists or maps of them).
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")


# What the grammar enforces of a parameter's constraints (llama-cpp-python's converter, plus the
# two steps below). Whatever it does not enforce, only the tool's validator can catch.
#
#   enum, const, required, types              enforced
#   minItems / maxItems, minLength / maxLength enforced by the converter
#   pattern                                    enforced when anchored (^...$) and simple (GRAMMAR_PATTERN)
#   minimum / maximum on an integer            enforced when both are set and the range has at most
#                                              MAX_RANGE values: it becomes an enum of those values
#   minimum / maximum on a number, one-sided   not enforced: the validator must refuse them
#   ranges, larger ranges, format, ...
MAX_RANGE = 256

# A pattern the converter translates exactly: anchored, made of plain characters, classes,
# groups, alternation and quantifiers. No escapes (``\.`` would reach llama.cpp as an escape it
# cannot parse), no ``.`` (it would allow a raw ``"`` inside the JSON string), no negated class
# and no ``(?...)``. ``\d`` is rewritten to ``[0-9]`` first, as it is the most common escape.
GRAMMAR_PATTERN = re.compile(r"\^(?!.*\(\?)(?!.*\[\^)[A-Za-z0-9 _\-:/@#,+*?|(){}\[\]]*\$")


def grammar_pattern(pattern: str) -> str | None:
    """``pattern`` as the grammar can enforce it, or None when the grammar must leave it to the
    validator. (An unanchored pattern means "contains a match" in JSON Schema: not expressible
    here without letting anything through around it, so it is left out too.)"""
    rewritten = re.sub(r"(\[[^\]]*\])|\\d", lambda m: m.group(1) or "[0-9]", pattern)  # \d outside classes
    rewritten = re.sub(r"\[[^\]]*\]", lambda m: m.group(0).replace("\\d", "0-9"), rewritten)  # inside
    return rewritten if GRAMMAR_PATTERN.fullmatch(rewritten) else None


def integer_range(schema: dict) -> list[int] | None:
    """The values of a small integer range (``minimum``/``exclusiveMinimum`` and
    ``maximum``/``exclusiveMaximum``), or None. A range is an enum of its integers, and the
    converter enforces enums."""
    bounds = [schema.get(key) for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")]
    if schema.get("type") != "integer" or "enum" in schema or any(isinstance(b, bool) for b in bounds):
        return None  # (a boolean exclusiveMinimum is draft 4's spelling: left to the validator)
    lows = [math.ceil(bounds[0])] if bounds[0] is not None else []
    lows += [math.floor(bounds[1]) + 1] if bounds[1] is not None else []
    highs = [math.floor(bounds[2])] if bounds[2] is not None else []
    highs += [math.ceil(bounds[3]) - 1] if bounds[3] is not None else []
    if not lows or not highs:
        return None  # one-sided: the grammar cannot list it
    low, high = max(lows), min(highs)
    return list(range(low, high + 1)) if 0 < high - low + 1 <= MAX_RANGE else None


def for_converter(schema):
    """``schema`` as llama.cpp's converter reads it right (the tool's own schema is not changed):

    - an enum under a list of types (``{"type": ["string", "null"], "enum": ["a", null]}``, how
      OpenAI's strict mode writes an optional enum) keeps its values. The converter turns a list
      of types into a union before it looks at ``enum``, so the values would be lost;
    - a small integer range becomes an enum of its values (``integer_range``);
    - a pattern is kept only in a form the converter translates exactly (``grammar_pattern``).
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "enum" in out and isinstance(out.get("type"), list):
        del out["type"]
    if (values := integer_range(out)) is not None:
        out["enum"] = values
    if isinstance(out.get("pattern"), str):
        if (pattern := grammar_pattern(out["pattern"])) is None:
            del out["pattern"]  # any string gets through the grammar; the validator checks it
        else:
            out["pattern"] = pattern
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [for_converter(sub) for sub in out[key]]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: for_converter(sub) for name, sub in out[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = for_converter(out[key])
    return out


def call_schema(tools: list[dict]) -> dict:
    """One JSON Schema for "a call of one of these tools": name fixed, arguments per tool."""
    shapes = []
    for tool in tools:
        function = tool["function"]
        parameters = for_converter(function.get("parameters") or {"type": "object", "properties": {}})
        shapes.append({
            "type": "object",
            "properties": {"name": {"const": function["name"]}, "arguments": parameters},
            "required": ["name", "arguments"],
        })
    return shapes[0] if len(shapes) == 1 else {"anyOf": shapes}


def _literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is also a valid GBNF literal here


def call_rules(tools: list[dict]) -> tuple[str, str]:
    """(the GBNF rules for one call's JSON, the name of the rule that matches it)."""
    converter = SchemaConverter(prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(call_schema(tools), "tools")
    call_rule = converter.visit(schema, "call")
    if "char" in converter._rules:
        converter._rules["char"] = _STRICT_CHAR
    return converter.format_grammar(), call_rule


def build_gbnf(tools: list[dict], mode: str, parallel: bool) -> str:
    """The grammar of a whole reply. mode: "auto" (text or calls) or "required" (calls only).

    Every reply the engine sends satisfies this grammar. The engine itself generates in steps
    (see ``decide``): it writes each ``<tool_call>`` opening itself and lets the model write
    the call under ``build_call_gbnf``.
    """
    rules_text, call_rule = call_rules(tools)
    one_call = f"{_literal(CALL_OPEN + chr(10))} {call_rule} {_literal(chr(10) + CALL_CLOSE)}"
    rules = [rules_text]
    rules.append(f"calls ::= {one_call}" + (f" ({_literal(chr(10))} {one_call})*" if parallel else ""))
    if mode == "auto":
        rules.append("root ::= calls | text")
        rules.append(r"text ::= [^<\x00] [^\x00]*")
    else:
        rules.append("root ::= calls")
    return "\n".join(rules)


def build_call_gbnf(tools: list[dict]) -> str:
    """The grammar of one call after its ``<tool_call>\n`` opening: the JSON, then the closing tag."""
    rules_text, call_rule = call_rules(tools)
    return f"{rules_text}\nroot ::= {call_rule} {_literal(chr(10) + CALL_CLOSE)}"


@functools.lru_cache(maxsize=64)
def _cached(tools_json: str, mode: str, parallel: bool) -> LlamaGrammar:
    tools = json.loads(tools_json)
    gbnf = build_call_gbnf(tools) if mode == "call" else build_gbnf(tools, mode, parallel)
    return LlamaGrammar.from_string(gbnf, verbose=False)


def grammar_for(tools: list[dict], mode: str, parallel: bool = False) -> LlamaGrammar:
    """The grammar for these tools, built once per distinct schema and then reused.

    mode "call" is one call's body (``build_call_gbnf``); "auto" and "required" a whole reply.
    """
    return _cached(json.dumps(tools, sort_keys=True, ensure_ascii=False), mode, parallel)


@functools.lru_cache(maxsize=32)
def _cached_schema(schema_json: str) -> LlamaGrammar:
    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(for_converter(json.loads(schema_json)), "response_format")
    converter.visit(schema, "")
    if "char" in converter._rules:
        converter._rules["char"] = _STRICT_CHAR
    return LlamaGrammar.from_string(converter.format_grammar(), verbose=False)


def response_grammar(schema: dict | None) -> LlamaGrammar | None:
    """The grammar for a text reply that must be JSON matching ``schema`` (``response_format``)."""
    return None if schema is None else _cached_schema(json.dumps(schema, sort_keys=True, ensure_ascii=False))


def gbnf_parses(gbnf: str, llm) -> bool:
    """Whether llama.cpp accepts ``gbnf`` (every rule well formed, ``root`` defined, no rule
    left undefined or left-recursive). ``llm`` is a ``llama_cpp.Llama``: a grammar is checked
    against a vocabulary.

    Why this is needed: llama-cpp-python's ``LlamaGrammar.from_string`` keeps the text without
    reading it, and a grammar llama.cpp then fails to parse makes the sampler NULL, which
    crashes the process at the first token. llama.cpp's own constructor says no by returning
    NULL, so we build one here, look, and free it.
    """
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def gbnf_accepts(gbnf: str, text: str, llm) -> bool:
    """Whether llama.cpp's own grammar sampler lets a model write exactly ``text`` under
    ``gbnf``: each of its tokens in turn must survive the grammar's mask, and the grammar must
    be complete at the end. This asks the same code that constrains decoding, with no model
    run: a way to check what a grammar enforces without hoping the model tries it."""
    import ctypes

    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        raise ValueError("llama.cpp cannot parse this grammar")

    def allowed(token: int) -> bool:
        candidate = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
        array = llama_cpp.llama_token_data_array(candidate, 1, -1, False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
        return candidate[0].logit != float("-inf")  # a masked token gets logit -inf

    try:
        for token in llm.tokenize(text.encode("utf-8"), add_bos=False, special=False):
            if not allowed(token):
                return False
            llama_cpp.llama_sampler_accept(sampler, token)
        return allowed(llama_cpp.llama_vocab_eos(vocab))  # end of text: only once the grammar is done
    finally:
        llama_cpp.llama_sampler_free(sampler)


@functools.lru_cache(maxsize=32)
def _checked(gbnf: str, llm) -> LlamaGrammar:
    if not gbnf_parses(gbnf, llm):
        raise ValueError("llama.cpp cannot parse it as GBNF: check that every rule reads 'name ::= ...', "
                         "that 'root' is defined, and that every rule it names is defined")
    return LlamaGrammar.from_string(gbnf, verbose=False)


def text_grammar(gbnf: str | None, llm) -> LlamaGrammar | None:
    """A request's own ``grammar``, checked once with ``gbnf_parses``; ValueError if it does not parse."""
    return None if gbnf is None else _checked(gbnf, llm)
