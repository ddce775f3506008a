"""simulate's JSON through orjson is byte for byte the standard library's `json.dumps(value, indent=2)`."""

from __future__ import annotations

import json
import random

from binding_scheduler.kube.jsonio import dumps_indented

ALPHABET = [chr(code) for code in [*range(0x80), 0xE9, 0xFF, 0x80, 0x2028, 0x2029, 0xFFFD, 0x1F600, 0x10FFFF]]


def test_indented_document_is_standard_librarys_byte_for_byte() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        document = {"k" + text: [text, {"x": text, "n": rng.randint(-10**18, 10**18)}], "empty": [], "none": {},
                    "null": None, "yes": True}
        assert dumps_indented(document) == json.dumps(document, indent=2)


def test_what_orjson_refuses_is_written_by_standard_library() -> None:
    document = {"huge": 10**30, "list": [1, 2]}
    assert dumps_indented(document) == json.dumps(document, indent=2)
