from __future__ import annotations

from typing import Any

from games.reports import with_faces


def test_every_mapping_with_a_d6_roll_gets_its_faces_and_the_view_is_copied():
    view: dict[str, Any] = {
        "rolls": [{"round": 1, "roll": [1, 6, 3]}, {"round": 2, "roll": [7, 1]}],
        "you": {"cup": {"roll": [2, 2]}, "roll": [], "name": "ann"},
        "nested": [[{"roll": [5]}], 4, "x"],
        "roll": [True, 1],
        "score": 3,
    }
    copy = with_faces(view)
    assert copy == {
        "rolls": [{"round": 1, "roll": [1, 6, 3], "faces": "⚀ ⚅ ⚂"}, {"round": 2, "roll": [7, 1]}],
        "you": {"cup": {"roll": [2, 2], "faces": "⚁ ⚁"}, "roll": [], "name": "ann"},
        "nested": [[{"roll": [5], "faces": "⚄"}], 4, "x"],
        "roll": [True, 1],
        "score": 3,
    }
    assert "faces" not in view["rolls"][0] and "faces" not in view["you"]["cup"]
    copy["nested"][0].append("changed")
    copy["rolls"][0]["roll"].append(6)
    assert view["nested"] == [[{"roll": [5]}], 4, "x"]
    assert view["rolls"][0]["roll"] == [1, 6, 3]
