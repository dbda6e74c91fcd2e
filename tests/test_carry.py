"""Carrying a file in parts to the accelerator machine: it comes back whole, or not at all."""
import json
import os

import pytest

from training.carry import MANIFEST, join, main, sha256, split


@pytest.fixture
def original(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(os.urandom(100_003))  # not a multiple of the part count
    return path


def test_split_then_join_gives_the_same_file(original, tmp_path):
    parts = split(original, tmp_path / "carry", parts=3)
    assert len(parts) == 3
    sizes = [part.stat().st_size for part in parts]
    assert sum(sizes) == original.stat().st_size and max(sizes) - min(sizes) <= 2
    joined = join(tmp_path / "carry")
    assert joined.read_bytes() == original.read_bytes()
    assert join(tmp_path / "carry") == joined  # joining again finds the checked file


def test_each_part_travels_alone_so_a_missing_one_is_named(original, tmp_path):
    parts = split(original, tmp_path / "carry", parts=3)
    parts[1].unlink()
    with pytest.raises(SystemExit, match="1 of 3 parts missing.*part-2-of-3"):
        join(tmp_path / "carry")
    assert not (tmp_path / "carry" / "base.gguf").exists()


def test_a_damaged_part_is_refused_and_leaves_no_joined_file(original, tmp_path):
    parts = split(original, tmp_path / "carry", parts=3)
    damaged = bytearray(parts[2].read_bytes())
    damaged[10] ^= 0xFF
    parts[2].write_bytes(bytes(damaged))
    with pytest.raises(SystemExit, match="not the one that was split"):
        join(tmp_path / "carry")
    assert [p.name for p in (tmp_path / "carry").iterdir() if "gguf" in p.name and "part" not in p.name] == []


def test_a_folder_without_a_manifest_says_what_to_run(tmp_path):
    with pytest.raises(SystemExit, match="training.carry split"):
        join(tmp_path)


def test_the_manifest_names_the_whole_files_digest(original, tmp_path):
    split(original, tmp_path / "carry", parts=2)
    manifest = json.loads((tmp_path / "carry" / MANIFEST).read_text())
    assert manifest["sha256"] == sha256(original) and manifest["size"] == original.stat().st_size
    assert manifest["parts"] == ["base.gguf.part-1-of-2", "base.gguf.part-2-of-2"]


def test_the_command_line_splits_and_joins(original, tmp_path, capsys):
    main(["split", str(original), "--into", str(tmp_path / "c"), "--parts", "4"])
    main(["join", str(tmp_path / "c")])
    assert "checked" in capsys.readouterr().out
    assert (tmp_path / "c" / "base.gguf").read_bytes() == original.read_bytes()
