"""Reference solution for labs/12_assemble_stream.py.

Its loop over the tool-call deltas is lesson 12's, line for line, on purpose: a reference answer
reads on its own, and what the lab adds to the lesson is the text, the finish reason and the
calls in index order."""


def assemble(chunks) -> dict:
    """Rebuild content, tool_calls and finish_reason from streamed chat-completion chunks."""
    text, calls, finish = [], {}, None
    for chunk in chunks:
        if not chunk.choices:
            continue  # the usage chunk at the end of the stream
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        delta = choice.delta
        if delta.content:
            text.append(delta.content)
        for piece in delta.tool_calls or []:
            call = calls.setdefault(piece.index, {"id": None, "name": "", "arguments": ""})
            if piece.id:
                call["id"] = piece.id
            if piece.function and piece.function.name:
                call["name"] += piece.function.name
            if piece.function and piece.function.arguments:
                call["arguments"] += piece.function.arguments
    return {"content": "".join(text) or None,
            "tool_calls": [calls[index] for index in sorted(calls)],
            "finish_reason": finish}
