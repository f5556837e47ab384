"""A GM's saved game settings ("templates"): saved from a game, used to start the new-game
form, deleted. Not game state (``games.postal`` owns that): a template belongs to its GM."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from games.models import TEMPLATE_NAME_LENGTH as NAME_LENGTH
from games.models import Game, GameTemplate


class TemplateError(Exception):
    """A template that cannot be saved; the message says why, in the GM's words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def save_from(game: Game, *, name: str) -> GameTemplate:
    """The settings of ``game`` (game, options, rhythm, language) saved under ``name`` for
    its GM."""
    name = " ".join(name.split())
    if not name:
        raise TemplateError("give the template a name")
    if len(name) > NAME_LENGTH:
        raise TemplateError(f"a template's name has at most {NAME_LENGTH} characters")
    same = GameTemplate.objects.filter(gm_id=game.gm_id, name__iexact=name).first()
    if same is not None:
        raise TemplateError(f"you already have a template called {same.name!r}")
    try:
        with transaction.atomic():
            return GameTemplate.objects.create(
                gm_id=game.gm_id,
                name=name,
                engine=game.engine,
                options=game.options,
                time_zone=game.time_zone,
                schedule=game.schedule,
                early_processing=game.early_processing,
                language=game.language,
            )
    except IntegrityError:
        raise TemplateError(f"you already have a template called {name!r}") from None


def delete(gm: Any, template_id: int) -> str | None:
    """Delete the GM's template ``template_id``; its name, or None if they have none such."""
    template = GameTemplate.objects.filter(gm_id=gm.pk, pk=template_id).first()
    if template is None:
        return None
    template.delete()
    return template.name
