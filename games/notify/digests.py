"""The daily digest of reports: one email a day to each address with seats that chose it
(``Seat.reports`` "digest", ``games.notify.email_choices``), at the address's hour
(``EmailPreference.hour``, 08:00 unless chosen) in its zone. For each game of those seats
it lists what happened since the seat's last email, what the seat owes now and until when,
and the link to its page; every seat is then marked told of those events. A seat that
chose to get its game's messages in the digest (``Seat.press_email``, games.community.press) finds
there the messages it has not been told of, and is marked told of them.

The sweep (beat, every SWEEP_SECONDS) calls ``send_daily_digests``. An address's digest
is claimed by a conditional UPDATE of its row's ``digest_day`` in the transaction that
writes the email and the marks: two sweeps at once, or one run twice, write it once, and
a digest that fails rolls its claim back for the next sweep. On a day when nothing
happened and nothing is owed, nothing is sent.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import translation

from games import postal
from games.community import press
from games.engines import registry
from games.lib import schedule
from games.models import EmailPreference, Game, PressEmail, Seat, Step
from games.notify import email_choices, languages, reports
from games.postal import access, press_actions
from moderator.mail import building, queueing

# The games a digest tells of: a finished game's seats got its final standings.
LIVE = [Game.Status.RUNNING, Game.Status.PAUSED]


# The seats a digest is written for: those that chose it for their reports or their
# messages.
IN_DIGEST = Q(reports=email_choices.DIGEST) | Q(press_email=PressEmail.DIGEST)


def digest_key(address: str, day: date) -> str:
    return f"daily:{address}:{day.isoformat()}"


def send_daily_digests(now: datetime) -> int:
    """Write the digest of every address whose hour has come today and whose digest of
    today is not written yet; returns how many were written."""
    digest_seats = Seat.objects.filter(
        IN_DIGEST, email__iexact=OuterRef("email"), game__status__in=LIVE
    )
    written = 0
    for preference in EmailPreference.objects.filter(Exists(digest_seats)).order_by("pk"):
        local = now.astimezone(schedule.zone(preference.time_zone))
        day = local.date()
        if local.hour < preference.hour:
            continue
        if preference.digest_day is not None and preference.digest_day >= day:
            continue
        written += _write(preference, day, now)
    return written


def _write(preference: EmailPreference, day: date, now: datetime) -> int:
    with transaction.atomic():
        claimed = (
            EmailPreference.objects.filter(pk=preference.pk)
            .filter(Q(digest_day__isnull=True) | Q(digest_day__lt=day))
            .update(digest_day=day)
        )
        if not claimed:
            return 0
        items, told, press_told = _items(preference.email)
        if not items:
            return 0
        tokens = access.mint_each([item["seat"] for item in items], now=now)
        for item, token in zip(items, tokens, strict=True):
            item["link"] = access.url(token)
        with translation.override(languages.of_seats(item["seat"] for item in items)):
            for item in items:
                step, zone = item["step"], item["seat"].zone
                item["deadline"] = (
                    None if step is None else schedule.local_time(step.deadline, zone)
                )
            row = building.build(
                "daily",
                to=items[0]["seat"].email,
                dedupe_key=digest_key(preference.email, day),
                headers=access.stop_headers(items[0]["seat"], "all-reports"),
                context={
                    "items": items,
                    "count": len(items),
                    "day": day,
                    "at": f"{preference.hour:02d}:00 ({preference.time_zone})",
                    "stop_url": access.stop_url(items[0]["seat"], "all-reports"),
                },
            )
        queueing.queue_once([row])
        postal.mark_told(told)
        press_actions.mark_told(press_told)
    return 1


def _items(address: str) -> tuple[list[dict[str, Any]], dict[int, int], dict[int, int]]:
    """Each game of the address's digest seats with something to tell (events since the
    seat's last email, or an order owed, for a seat whose reports come in the digest;
    messages, for one whose messages do), soonest deadline first; seat id -> the latest
    event told, and seat id -> the latest message told."""
    seats = list(
        Seat.objects.filter(IN_DIGEST, email__iexact=address, game__status__in=LIVE)
        .select_related("game")
        .defer("game__state", "game__seed")
        .order_by("game_id", "position")
    )
    steps = {
        step.game_id: step
        for step in Step.objects.filter(
            game_id__in={seat.game_id for seat in seats}, status=Step.Status.OPEN
        ).defer("state_before", "state_after")
    }
    items: list[dict[str, Any]] = []
    told: dict[int, int] = {}
    press_told: dict[int, int] = {}
    for seat in seats:
        with_reports = seat.reports == email_choices.DIGEST
        since: dict[int, list[dict[str, Any]]] = {seat.position: []}
        owed: list[dict[str, Any]] = []
        step = steps.get(seat.game_id)
        if with_reports:
            since, latest = reports.events_since(seat.game, [seat])
            owed = [] if step is None else [p for p in step.prompts if p["seat"] == seat.position]
            if latest and (since[seat.position] or owed):
                told[seat.pk] = latest
        messages: list[press.Shown] = []
        if seat.press_email == PressEmail.DIGEST:
            messages, latest_message = press.for_digest(seat)
            if messages:
                press_told[seat.pk] = latest_message
        if not since[seat.position] and not owed and not messages:
            continue
        items.append(
            {
                "seat": seat,
                "game": seat.game,
                "engine": registry.get(seat.game.engine),
                "reports": with_reports,
                "since": since[seat.position],
                "step": step,
                "owed": owed,
                "paused": seat.game.status == Game.Status.PAUSED,
                "messages": messages,
            }
        )
    items.sort(key=_soonest_first)
    return items, told, press_told


def _soonest_first(item: dict[str, Any]) -> tuple[bool, datetime, int]:
    step = item["step"]
    return (step is None, step.deadline if step else datetime.max, item["seat"].pk)
