"""Reference solution for labs/03_feed_results_back.py."""


NO_RESULT = "Error: no result. Call the tool again or answer without it."


def results_message(calls: list[dict], finished: list[tuple[str, str]]) -> str:
    by_id = dict(finished)  # pair by id, never by position: tools finish in any order
    blocks = []
    for call in calls:  # one block per call, in the order the model wrote them
        result = by_id.get(call["id"], NO_RESULT)
        blocks.append(f'<tool_result id="{call["id"]}" name="{call["name"]}">\n{result}\n</tool_result>')
    return "\n".join(blocks)


def add_round(history: list[dict], reply: str, calls: list[dict],
              finished: list[tuple[str, str]]) -> list[dict]:
    return [
        *history,  # a new list: the caller's history stays as it was
        {"role": "assistant", "content": reply},
        {"role": "user", "content": results_message(calls, finished)},
    ]
