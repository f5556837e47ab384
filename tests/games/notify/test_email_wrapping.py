"""HTML emails keep words whole in their tables at 390 px: a body wraps long words with
``overflow-wrap:break-word``, which breaks a word only where it would overflow its line;
``anywhere`` would let a table cell shrink below its longest word and cut every word in it
(issue 41, section 10). Only a bare link, alone in its paragraph, may break anywhere."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

EMAILS = Path(settings.BASE_DIR) / "templates" / "emails"


def test_no_email_body_lets_a_table_cut_its_words() -> None:
    anywhere = {
        str(path.relative_to(EMAILS)): re.findall(
            r'<(\w+) style="[^"]*overflow-wrap:anywhere', path.read_text()
        )
        for path in sorted(EMAILS.glob("*/body.html"))
    }
    assert {name: tags for name, tags in anywhere.items() if tags} == {
        "lost-links/body.html": ["p"],
        "signin/body.html": ["p"],
    }
    wrapped = [
        path.parent.name
        for path in sorted(EMAILS.glob("*/body.html"))
        if "overflow-wrap:break-word" not in path.read_text()
        # (a body that is another's, included whole, wraps as that one does)
        and not path.read_text().startswith('{% include "emails/')
    ]
    assert wrapped == []
