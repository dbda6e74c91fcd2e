"""Turn a trained adapter (PEFT safetensors) into the GGUF file llama.cpp loads.

    python -m training.convert_adapter training/runs/tools/checkpoint-800 \\
        --out toolkit/engine/adapters/smollm2-tools.lora.gguf

llama.cpp's own converter, ``convert_lora_to_gguf.py``, ships in llama-cpp-python's source
distribution (under ``vendor/llama.cpp``) together with the ``gguf-py`` and ``conversion``
packages it imports. This script fetches that source distribution once, for the installed
llama-cpp-python version, with pip (``pip download --no-binary``: pip's cache makes the second
time free), unpacks those pieces into ``~/.cache/tool-calling-lab/llama.cpp-<version>`` and runs
the converter. The converter reads the base model's ``config.json`` from the run folder's
``base-config`` (written by ``train_lora``; written here from the lab's GGUF where it is missing,
as for an adapter trained on the accelerator).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CACHE = Path.home() / ".cache" / "tool-calling-lab"
NEEDED = ("convert_lora_to_gguf.py", "convert_hf_to_gguf.py", "conversion/", "gguf-py/")


def converter_folder() -> Path:
    """The unpacked ``vendor/llama.cpp`` pieces for the installed llama-cpp-python."""
    version = importlib.metadata.version("llama-cpp-python")
    folder = CACHE / f"llama.cpp-{version}"
    if (folder / "convert_lora_to_gguf.py").is_file():
        return folder
    with tempfile.TemporaryDirectory() as download:
        subprocess.run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}", "--no-deps",
                        "--no-binary", ":all:", "--dest", download], check=True)
        archive = next(Path(download).glob("llama_cpp_python-*.tar.gz"))
        prefix = f"{archive.name[:-len('.tar.gz')]}/vendor/llama.cpp/"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix)
                       and m.name[len(prefix):].startswith(NEEDED)]
            for member in members:
                member.name = member.name[len(prefix):]
            folder.mkdir(parents=True, exist_ok=True)
            tar.extractall(folder, members=members, filter="data")
    return folder


def convert(checkpoint: Path, out: Path, base_config: Path | None = None) -> Path:
    # The converter runs in its own folder, so every path it is given must be absolute.
    checkpoint, out = Path(checkpoint).resolve(), Path(out).resolve()
    base_config = Path(base_config).resolve() if base_config else checkpoint.parent / "base-config"
    if not (base_config / "config.json").is_file():
        # train_lora writes it at the end of a run; an adapter trained elsewhere
        # (train_at_scale, on the accelerator) comes back without it, so it is made here.
        from training.train_lora import load_base, save_base_config
        save_base_config(load_base()[1], base_config)
        print(f"wrote the base model's config.json to {base_config}")
    folder = converter_folder()
    out.parent.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PYTHONPATH": str(folder / "gguf-py")}
    subprocess.run([sys.executable, str(folder / "convert_lora_to_gguf.py"), "--base", str(base_config),
                    "--outfile", str(out), "--outtype", "f16", str(checkpoint)], check=True, env=environment,
                   cwd=folder)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a checkpoint folder written by train_lora")
    parser.add_argument("--out", type=Path, required=True, help="the .gguf file to write")
    parser.add_argument("--base-config", type=Path, help="folder with the base config.json (default: the run's)")
    args = parser.parse_args(argv)
    path = convert(args.checkpoint, args.out, args.base_config)
    print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
