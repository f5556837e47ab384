"""What a sign-up does to its game and its seats (games.community.signups keeps the
sign-ups themselves and tells their people): the accepted sign-ups seated when the game
starts, a seat in civil disorder taken over by an approved sign-up or by a reserve, sign-up
closed, and a full game that could not start left for its GM.

Each runs in the caller's transaction, which holds the game's lock: the caller locked the
game row first, as every change of a game does."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from games import postal
from games.engines import text as engine_text
from games.models import Game, Seat, SignUp, SignUpMode
from games.notify import email_choices, languages


def seat_and_start(
    game: Game, accepted: Sequence[SignUp], *, now: datetime, seed: bytes | None
) -> Game:
    """Seat the ``accepted`` sign-ups after the invited players, in that order, each with
    its address's default reports, receipts, language and time zone, and start the game
    (``postal.start_game``: every seat gets its first report and link). PostalError from
    the start rolls the seats back with the caller's transaction."""
    first = game.seats.count()
    chosen = email_choices.defaults(signup.email for signup in accepted)
    spoken = languages.of_addresses(signup.email for signup in accepted)
    zones = email_choices.zones(signup.email for signup in accepted)
    receipts = email_choices.web_receipt_addresses(signup.email for signup in accepted)
    Seat.objects.bulk_create(
        Seat(
            game=game,
            position=first + number,
            name=signup.name,
            email=signup.email,
            time_zone=zones.get(email_choices.normalise(signup.email), ""),
            reports=chosen.get(email_choices.normalise(signup.email), ""),
            language=spoken.get(email_choices.normalise(signup.email), ""),
            web_receipts=email_choices.normalise(signup.email) in receipts,
        )
        for number, signup in enumerate(accepted)
    )
    return postal.start_game(game.pk, now=now, seed=seed)


def could_not_start(game: Game, why: str) -> None:
    """Every seat is taken but the game's rules refused to start it (``why``): the game
    waits for its GM, who is told why."""
    Game.objects.filter(pk=game.pk).update(
        needs_gm=f"every seat is taken, but the game could not start: {why}"
    )


def take_over_seat(game: Game, position: int, *, name: str, email: str, now: datetime) -> None:
    """The GM approved a sign-up for the seat at ``position``, in civil disorder: ``name``
    and ``email`` replace the seat's player (``postal.replace_player``: the seat's state
    stays, its new player is welcomed with its report and a link and starts out of civil
    disorder, the one who leaves is told, logged for the players). A sign-up's address
    never plays in the game already (``signups.sign_up``), so the player is always new."""
    postal.replace_player(
        game.pk,
        position=position,
        name=name,
        email=email,
        now=now,
        reason="a new player took over the seat from the open games",
    )


def reserve_takes_seat(game: Game, position: int, *, name: str, email: str, now: datetime) -> None:
    """The seat at ``position`` fell into civil disorder and ``name`` at ``email``, the
    first reserve of the first-come game, takes it (``postal.replace_player``, as
    ``take_over_seat``); the GM's log says so. PostalError, with nothing of it changed
    (its savepoint rolled back), should the handover be refused."""
    postal.replace_player(
        game.pk,
        position=position,
        name=name,
        email=email,
        now=now,
        reason="the seat fell into civil disorder; the first reserve took it",
        logged=engine_text._(
            "Reserve %(name)s took seat %(number)d (civil disorder)",
            name=name,
            number=position + 1,
        ),
    )


def close(game: Game) -> None:
    """The GM closes sign-ups: the game leaves the list of open games."""
    game.signup = SignUpMode.CLOSED
    game.save(update_fields=["signup"])
