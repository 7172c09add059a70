"""ROM catalogue: names, ale-py's bundled ROMs, bank-switching detection, bad input."""
import csv
import os
import random

import pytest

import cule
from conftest import DATA
from cule import RomError, UnknownGameError, UnsupportedCartridgeError
from cule.roms import detect_bankswitch


def _tsv(name):
    with open(DATA / "ale" / name, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_list_games_matches_ale_games():
    rows = _tsv("games.tsv")
    expected = sorted(r["rom_id"] for r in rows if not r["controllers"].startswith("NO RomSettings"))
    assert len(expected) == 104
    assert cule.list_games() == expected


def test_bankswitch_detection_matches_ale_on_all_bundled_roms():
    """roms.tsv was written by ALE itself: md5 and detected type of all 108 ROMs."""
    rows = _tsv("roms.tsv")
    assert len(rows) == 108
    from ale_py import roms as ale_roms

    mismatches = []
    for row in rows:
        with open(ale_roms.get_rom_path(row["rom_id"]), "rb") as f:
            data = f.read()
        got = detect_bankswitch(data)
        if got != row["bankswitch_type"] or len(data) != int(row["bytes"]):
            mismatches.append((row["rom_id"], got, row["bankswitch_type"]))
    assert not mismatches


@pytest.mark.parametrize("name", ["pong", "Pong", "ALE/Pong-v5", "cule/Pong-v5", "PongNoFrameskip-v4", "Pong-v0", "  pong "])
def test_names_resolve(name):
    assert cule.load_rom(name).game == "pong"


def test_every_gymnasium_ale_name_resolves():
    import gymnasium
    import ale_py

    gymnasium.register_envs(ale_py)
    names = [k for k in gymnasium.registry if k.startswith("ALE/")]
    resolved = {n: cule.load_rom(n).game for n in names if n.split("/")[1].split("-")[0].lower() not in
                ("combat", "joust", "mazecraze", "warlords")}
    assert resolved and all(resolved.values())
    assert set(resolved.values()) == set(cule.list_games())


def test_rom_by_path_finds_game_by_md5(tmp_path):
    src = cule.load_rom("breakout")
    path = tmp_path / "renamed.bin"
    path.write_bytes(src.data)
    rom = cule.load_rom(str(path))
    assert (rom.game, rom.md5, rom.bankswitch) == ("breakout", src.md5, "2K")
    assert cule.load_rom(path).game == "breakout"  # os.PathLike too


def test_unknown_md5_under_a_game_file_name_is_that_game(tmp_path):
    data = bytearray(cule.load_rom("boxing").data)
    data[0] ^= 0xFF
    path = tmp_path / "boxing.bin"
    path.write_bytes(bytes(data))
    assert cule.load_rom(str(path)).game == "boxing"


def test_rom_outside_ale_has_no_game(tmp_path):
    path = tmp_path / "homebrew.bin"
    rng = random.Random(0)
    path.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    rom = cule.load_rom(str(path))
    assert rom.game is None and rom.bankswitch == "4K"


def test_unknown_name_suggests_close_games():
    with pytest.raises(UnknownGameError, match=r"'pong'"):
        cule.load_rom("pongg")
    with pytest.raises(UnknownGameError, match="list_games"):
        cule.load_rom("not-a-game")


@pytest.mark.parametrize("name", ["combat", "joust", "maze_craze", "warlords", "ALE/Joust-v5"])
def test_bundled_roms_without_settings_are_refused(name):
    with pytest.raises(UnknownGameError, match="no game settings"):
        cule.load_rom(name)


def test_missing_file(tmp_path):
    with pytest.raises(RomError, match="does not exist"):
        cule.load_rom(str(tmp_path / "nothing.bin"))


def test_directory_is_not_a_rom(tmp_path):
    (tmp_path / "d.bin").mkdir()
    with pytest.raises(RomError, match="not a file"):
        cule.load_rom(str(tmp_path / "d.bin"))


def test_empty_file(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    with pytest.raises(RomError, match="empty"):
        cule.load_rom(str(path))


def test_truncated_file(tmp_path):
    path = tmp_path / "si_cut.bin"
    path.write_bytes(cule.load_rom("space_invaders").data[:4000])
    with pytest.raises(RomError, match="4000 bytes.*truncated"):
        cule.load_rom(str(path))


def test_oversized_file_is_not_read(tmp_path):
    path = tmp_path / "big.bin"
    with open(path, "wb") as f:
        f.truncate(10 * 1024 * 1024)
    with pytest.raises(RomError, match="larger than any"):
        cule.load_rom(str(path))


def test_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can read a file without permissions")
    path = tmp_path / "locked.bin"
    path.write_bytes(bytes(4096))
    path.chmod(0)
    with pytest.raises(RomError, match="could not be read"):
        cule.load_rom(str(path))


def test_unsupported_scheme_is_named(tmp_path):
    rng = random.Random(1)
    f4 = bytes(rng.randrange(256) for _ in range(32768))  # 32K: Stella says F4
    path = tmp_path / "big32k.bin"
    path.write_bytes(f4)
    with pytest.raises(UnsupportedCartridgeError, match="'F4'.*Supported: 2K"):
        cule.load_rom(str(path))


@pytest.mark.parametrize(
    "size, patch, expected",
    [
        (2048, None, "2K"),
        (4096, None, "4K"),
        (8192, None, "F8"),
        (8192, (100, "8de01f"), "E0"),  # STA $1FE0
        (8192, (100, "853ea900"), "3E"),
        (8192, (100, "853f00853f"), "3F"),  # two STA $3F
        (8192, (100, "8d4002"), "UA"),
        (8192, (100, "2000d0c6c5"), "FE"),
        (10495, None, "DPC"),
        (12288, None, "FASC"),
        (16384, None, "F6"),
        (8448, None, "AR"),
        (4096, (10, "9dfff3"), "CV"),
    ],
)
def test_detection_rules(size, patch, expected):
    rng = random.Random(size)
    # Random bytes avoid the signatures by chance; 0xEA never starts one.
    image = bytearray(rng.choice([0x00, 0x11, 0xEA, 0x42]) for _ in range(size))
    if patch:
        at, hexbytes = patch
        image[at : at + len(hexbytes) // 2] = bytes.fromhex(hexbytes)
    assert detect_bankswitch(bytes(image)) == expected


def test_superchip_and_mirrored_images():
    rng = random.Random(7)
    bank = lambda: bytes([0xFF] * 256) + bytes(rng.randrange(256) for _ in range(3840))
    assert detect_bankswitch(bank() + bank()) == "F8SC"
    assert detect_bankswitch(bank() + bank() + bank() + bank()) == "F6SC"
    half = bytes(rng.randrange(256) for _ in range(4096))
    assert detect_bankswitch(half + half) == "4K"  # an 8K image of two equal halves
    small = bytes(rng.randrange(256) for _ in range(2048))
    assert detect_bankswitch(small + small) == "2K"


def test_one_signature_hit_is_not_3f():
    image = bytearray([0xEA] * 8192)
    image[50:52] = b"\x85\x3f"
    assert detect_bankswitch(bytes(image)) == "F8"


def test_odd_size_is_rejected_with_advice():
    with pytest.raises(RomError, match="3000 bytes.*truncated"):
        detect_bankswitch(bytes(3000))
