"""Card codes, points, burn values and the barcode codecs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codecs import CodecError, Index52Codec, SuitRank4Codec, TableCodec, make_codec
from station.core.cards import ALL_CARDS, BURN_VALUE, POINTS, hand_total, parse_card


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        ("10H", "TH"),
        ("10h", "TH"),
        (" td ", "TD"),
        ("Kc", "KC"),
        ("\t9d\n", "9D"),
        ("tD", "TD"),
    ],
)
def test_parse_card_accepts_the_spellings(text: str, code: str) -> None:
    assert parse_card(text) == code


@pytest.mark.parametrize("text", [None, "", "??", "1S", "11S", "AZ", "A S", "ASS", 10, b"AS"])
def test_parse_card_refuses_the_rest(text: object) -> None:
    assert parse_card(text) is None


def test_points_and_burn_values() -> None:
    assert [POINTS[r + "S"] for r in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert [BURN_VALUE[r + "H"] for r in "A23456789TJQK"] == list(range(1, 10)) + [10] * 4
    assert hand_total(["9S", "8H"]) == 7 and hand_total(["KS", "QD", "5C"]) == 5
    assert len(ALL_CARDS) == 52 == len(set(ALL_CARDS))


def test_suit_rank_4() -> None:
    codec = make_codec("suit-rank-4")
    assert codec.decode("1010") == "AS" and codec.decode("2100") == "TH"
    assert codec.decode("3130") == "KC" and codec.decode("4020") == "2D"
    assert codec.decode("1011") is None and codec.decode("5010") is None
    assert codec.decode("0010") is None and codec.decode(" 1010\r") == "AS"
    assert all(codec.decode(codec.encode(c)) == c for c in ALL_CARDS)


def test_index52_order_is_spades_hearts_diamonds_clubs_ace_to_king() -> None:
    codec = Index52Codec()
    assert codec.decode("0") == "AS" and codec.decode("12") == "KS"
    assert codec.decode("13") == "AH" and codec.decode("26") == "AD"
    assert codec.decode("39") == "AC" and codec.decode("51") == "KC"
    assert codec.decode("07") == "8S"
    for bad in ("52", "-1", "x", "", "1.0", "٣"):
        assert codec.decode(bad) is None
    assert [codec.decode(str(i)) for i in range(52)] == [
        codec.decode(codec.encode(c)) for c in ALL_CARDS
    ]


def test_table_codec_from_csv(tmp_path: Path) -> None:
    path = tmp_path / "vendor.csv"
    path.write_text("barcode,card\n# deck print run 2\n8800101,AS\n8800102, 10h\n8800199,AS\n\n")
    codec = make_codec(f"table:{path}")
    assert codec.decode("8800101") == "AS" and codec.decode("8800102") == "TH"
    assert codec.decode("8800199") == "AS" and codec.decode("0000") is None
    assert codec.encode("AS") == "8800101"
    with pytest.raises(CodecError, match="no barcode for KD"):
        codec.encode("KD")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1,XX\n", "not a card code"),
        ("1,AS\n1,KD\n", "maps to AS and KD"),
        ("", "empty"),
        ("1,AS,extra\n", "expected 'barcode,card'"),
    ],
)
def test_table_codec_refuses_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(CodecError, match=message):
        TableCodec.from_csv(path)


def test_unknown_codec_and_missing_file_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(CodecError, match="unknown codec 'ean13'"):
        make_codec("ean13")
    with pytest.raises(CodecError, match="cannot read the barcode table"):
        make_codec(f"table:{tmp_path / 'missing.csv'}")
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe,AS\n")
    with pytest.raises(CodecError, match="not UTF-8"):
        make_codec(f"table:{tmp_path / 'binary.csv'}")


@given(st.text(max_size=12))
def test_codecs_never_raise_on_any_payload(payload: str) -> None:
    for codec in (make_codec("text"), SuitRank4Codec(), Index52Codec()):
        result = codec.decode(payload)
        assert result is None or result in ALL_CARDS
