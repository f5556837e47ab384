"""A game not yet started, changed or deleted by its GM: its title, its invited players
(the seats) and, for an open game, its number of seats, within its way to play's player
counts; or the whole game gone. Once it has started neither is possible: a seat changes
hands by a replacement (``seats.replace_player``), and a game's record stays."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from games.engines import registry
from games.models import Game, Seat, SignUp, SignUpMode
from games.notify import email_choices
from games.postal.errors import PostalError
from games.postal.games import Player, check_players, check_seats, single_line
from games.postal.locks import locked
from moderator.mail.models import OutboundEmail

NOT_STARTED = (Game.Status.DRAFT, Game.Status.RECRUITING)


class GameGone(PostalError):
    """The game to delete is deleted already."""


def _not_started(game: Game, doing: str) -> None:
    if game.status not in NOT_STARTED:
        raise PostalError(
            f"the game has started: you cannot {doing} it any more; a player who leaves "
            "is replaced on the game's page"
        )


def change_recruiting(
    game_id: int, *, title: str, players: Sequence[Player], seats_wanted: int | None
) -> Game:
    """The game, not yet started, with a new ``title``, the ``players`` invited (in seat
    order) and, if open for sign-up, ``seats_wanted`` seats. A player kept (same name and
    address) keeps their seat and its link; one no longer named loses the seat, and their
    link stops working; a new one gets a seat, and their link with the invitations.
    PostalError, and nothing changed, when the seats do not fit the game's player counts
    or the people who signed up and hold a seat."""
    with transaction.atomic():
        game = locked(game_id)
        _not_started(game, "change")
        title = single_line(title, "the title")
        check_players(players)
        counts = registry.players(game.engine, game.options)
        if game.signup == SignUpMode.CLOSED:
            seats_wanted = None
        check_seats(counts, len(players), game.signup, seats_wanted)
        holding = game.signups.filter(state=SignUp.State.ACCEPTED, position__isnull=True).count()
        if seats_wanted is not None and len(players) + holding > seats_wanted:
            raise PostalError(
                f"{holding} people who signed up hold a seat and you invite {len(players)}: "
                f"the game needs at least {len(players) + holding} seats"
            )
        _reseat(game, players)
        game.title = title
        game.seats_wanted = seats_wanted
        game.save(update_fields=["title", "seats_wanted"])
    return game


def _reseat(game: Game, players: Sequence[Player]) -> None:
    """The game's seats become ``players``, in order: a seat whose name and address are
    named again is kept (with its links), the others deleted, the new ones created."""
    existing = {
        (seat.name.lower(), email_choices.normalise(seat.email)): seat
        for seat in game.seats.order_by("position")
    }
    wanted = [(p.name.strip(), p.email.strip()) for p in players]
    keys = [(name.lower(), email_choices.normalise(email)) for name, email in wanted]
    kept = {key: existing[key] for key in keys if key in existing}
    Seat.objects.filter(game=game).exclude(pk__in=[s.pk for s in kept.values()]).delete()
    # Out of the way first: positions are unique within a game.
    for offset, seat in enumerate(kept.values()):
        seat.position = 1000 + offset
        seat.save(update_fields=["position"])
    chosen = email_choices.defaults(email for _, email in wanted)
    for position, ((name, email), key) in enumerate(zip(wanted, keys, strict=True)):
        if key in kept:
            seat = kept[key]
            seat.position, seat.name, seat.email = position, name, email
            seat.save(update_fields=["position", "name", "email"])
        else:
            Seat.objects.create(
                game=game,
                position=position,
                name=name,
                email=email,
                reports=chosen.get(email_choices.normalise(email), ""),
            )


def delete_recruiting(game_id: int) -> str:
    """Delete a game not yet started with its seats and sign-ups, and its emails not yet
    sent; its title. PostalError once it has started: a game's record stays; GameGone when
    it is deleted already (a double click)."""
    with transaction.atomic():
        try:
            game = locked(game_id)
        except Game.DoesNotExist:
            raise GameGone("nothing was deleted: the game is already deleted") from None
        _not_started(game, "delete")
        title = game.title
        OutboundEmail.objects.filter(game=game, state=OutboundEmail.State.PENDING).delete()
        game.delete()
    return title
