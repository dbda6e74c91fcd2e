"""What a room's replies would cost decoded together: one token of every lane per step, against
one token at a time as the engine decodes them now.

    python benchmarks/batched_decode.py [--lanes 16] [--tokens 48] [--context 600] [--repeats 2]

In a room at temperature 1 nothing can be shared, and most of the model's time goes to writing
replies one token at a time (docs/workshop.md). A decode step of this small model costs about
as much for one token as for a few more: the weights are read once per step either way. This
measures that on llama.cpp directly, with the embedded model's base weights and the engine's
context settings (flash attention, all cores):

- **alone**: one sequence in the cache, ``--context`` tokens long, then ``--tokens`` steps of
  one token each; the time is scaled to ``--lanes`` replies, as a room of that many browsers
  is decoded today, one request after another;
- **batched**: ``--lanes`` copies of the same ``--context`` tokens, then ``--tokens`` steps in
  which one batch holds the next token of every lane.

Token ids are fixed rather than sampled: a step's cost does not depend on which tokens it holds,
and sampling (grammar included) is timed elsewhere (benchmarks/grammar_sampling.py). Prints
the milliseconds per written token of each way, and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import llama_cpp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit.engine import model_path  # noqa: E402


@contextlib.contextmanager
def quiet_stderr():
    """llama.cpp writes its loading report to the process's stderr: keep it off the table."""
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class Decoder:
    """A llama.cpp context holding up to ``lanes`` sequences in one cache."""

    def __init__(self, lanes: int, context: int, tokens: int):
        with quiet_stderr():
            llama_cpp.llama_backend_init()
            self.model = llama_cpp.llama_model_load_from_file(str(model_path()).encode(),
                                                              llama_cpp.llama_model_default_params())
            params = llama_cpp.llama_context_default_params()
            params.n_ctx = context + lanes * tokens + 64  # the shared prompt once, then each lane's reply
            params.n_batch = params.n_ubatch = 512
            params.n_seq_max, params.kv_unified = lanes, True  # lanes share the prompt's cells
            params.n_threads = params.n_threads_batch = os.cpu_count() or 2
            params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            self.ctx = llama_cpp.llama_init_from_model(self.model, params)
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(512, 0, lanes)

    def decode(self, entries: list[tuple[int, int, int]]) -> None:
        """One llama_decode of (token, position, lane) entries, with logits for each."""
        self.batch.n_tokens = len(entries)
        for i, (token, position, lane) in enumerate(entries):
            self.batch.token[i], self.batch.pos[i] = token, position
            self.batch.n_seq_id[i], self.batch.seq_id[i][0], self.batch.logits[i] = 1, lane, True
        if llama_cpp.llama_decode(self.ctx, self.batch) != 0:
            raise RuntimeError("llama_decode failed")

    def prompt(self, length: int, lanes: int) -> None:
        """A fresh cache holding ``length`` prompt tokens, shared by ``lanes`` sequences."""
        llama_cpp.llama_memory_clear(self.memory, True)
        for start in range(0, length, 512):
            self.decode([(100 + position % 1000, position, 0) for position in range(start, min(start + 512, length))])
        for lane in range(1, lanes):
            llama_cpp.llama_memory_seq_cp(self.memory, 0, lane, -1, -1)


def alone(decoder: Decoder, lanes: int, context: int, tokens: int) -> float:
    """Seconds for ``lanes`` replies of ``tokens`` tokens, one token per step (one lane timed)."""
    decoder.prompt(context, 1)
    started = time.perf_counter()
    for step in range(tokens):
        decoder.decode([(200, context + step, 0)])
    return (time.perf_counter() - started) * lanes


def batched(decoder: Decoder, lanes: int, context: int, tokens: int) -> float:
    """Seconds for the same replies, one batch of ``lanes`` tokens per step."""
    decoder.prompt(context, lanes)
    started = time.perf_counter()
    for step in range(tokens):
        decoder.decode([(200 + lane, context + step, lane) for lane in range(lanes)])
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=16, help="replies decoded together (browsers in the room)")
    parser.add_argument("--tokens", type=int, default=48, help="tokens written per reply")
    parser.add_argument("--context", type=int, default=600, help="prompt tokens already in the cache")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    decoder = Decoder(args.lanes, args.context, args.tokens)
    written = args.lanes * args.tokens
    times = {"alone": [], "batched": []}
    for _ in range(args.repeats):  # alternating, so that a change in the machine's speed hits both
        times["alone"].append(alone(decoder, args.lanes, args.context, args.tokens))
        times["batched"].append(batched(decoder, args.lanes, args.context, args.tokens))
    print(f"{args.lanes} replies of {args.tokens} tokens after {args.context} prompt tokens, "
          f"{os.cpu_count()} threads, median of {args.repeats}:")
    ms = {name: 1000 * statistics.median(seconds) / written for name, seconds in times.items()}
    for name, value in ms.items():
        print(f"  {name:8s} {value:6.2f} ms a written token")
    print(f"  batched costs {ms['batched'] / ms['alone']:.2f}x alone's time per token")


if __name__ == "__main__":
    main()
