"""The two ways train_lora scores a reply: through the reply only, or through the prompt too.

Training needs PyTorch, transformers and peft, which the lab itself never installs; these tests
run where they are (the training environment, ``training/requirements.txt``) and are skipped
elsewhere. They use a tiny random Llama, not the embedded model, so they take a second.
"""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from training.train_lora import LINEAR_LAYERS, reply_logits  # noqa: E402

PROMPT = [5, 17, 3, 42, 8, 23, 11, 30, 2, 19, 7]
REPLY = [12, 40, 6, 33]


def tiny_adapted_model():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    base = transformers.LlamaForCausalLM(config)
    model = peft.get_peft_model(base, peft.LoraConfig(r=4, lora_alpha=8, target_modules=LINEAR_LAYERS,
                                                      task_type="CAUSAL_LM", init_lora_weights=False))
    return model.eval()


def reply_loss(model, through_prompt):
    logits = reply_logits(model, PROMPT, REPLY, through_prompt=through_prompt)
    return logits, torch.nn.functional.cross_entropy(logits, torch.tensor(REPLY))


def adapter_gradients(model, through_prompt):
    model.zero_grad()
    reply_loss(model, through_prompt)[1].backward()
    return {name: param.grad.clone() for name, param in model.named_parameters() if param.requires_grad}


def test_both_ways_give_the_same_logits_one_row_per_reply_token():
    model = tiny_adapted_model()
    cached, _ = reply_loss(model, through_prompt=False)
    whole, _ = reply_loss(model, through_prompt=True)
    assert cached.shape == whole.shape == (len(REPLY), 64)
    assert torch.allclose(cached, whole, atol=1e-5)


def test_only_through_the_prompt_does_the_adapter_learn_how_the_prompt_is_read():
    model = tiny_adapted_model()
    cached = adapter_gradients(model, through_prompt=False)
    whole = adapter_gradients(model, through_prompt=True)
    # The first layer's adapter on the keys: in the cached run it gets a gradient only from
    # the reply's own keys; through the prompt it also gets one from every prompt token's key.
    keys = next(name for name in cached if "layers.0.self_attn.k_proj.lora_A" in name)
    assert cached[keys].abs().sum() > 0
    assert not torch.allclose(cached[keys], whole[keys], atol=1e-6)
    assert all(torch.isfinite(grad).all() for grad in whole.values())
