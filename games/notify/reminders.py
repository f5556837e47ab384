"""Reminders before a deadline, for the seats that still owe an order.

Each seat's ladder (``games.notify.ladder``) says which channel reminds it and when: by
default an email at each of the game's ``reminders`` hours (24 and 2). When the sweep finds
a rung of a seat still owing an order (prompted, and no order of its own in the step) whose
time has come, moved out of the player's night (``games.notify.quiet``), it writes the
rung's email or push. The dedupe key holds the rung's hours and the deadline, so a deadline
the GM extends earns fresh reminders, and running the sweep again sends nothing twice.

Only the most urgent rung due reminds (after a missed 24-hour rung, the 2-hour one is what
matters), and a rung whose time came before the step opened reminds of nothing: the step's
report, just sent, already says the deadline.

A player (an address) may choose one daily digest instead (``EmailPreference``): their seats
get no reminder of their own, and once a day, at the chosen hour of their zone, one email
lists every order their address still owes, in every game.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, time, timedelta
from functools import reduce
from typing import Any

from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import translation

from games.engines import registry
from games.lib import schedule, words
from games.models import (
    Decision,
    EmailPreference,
    Game,
    Order,
    PlayerPost,
    PlayerWebhook,
    PushDelivery,
    PushSubscription,
    Seat,
    Step,
)
from games.notify import (
    channels,
    email_choices,
    ladder,
    languages,
    ledger,
    player_hooks,
    push,
    quiet,
    webhooks,
)
from games.postal import access
from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail


def reminder_key(step: Step, position: int, hours: int | float) -> str:
    return (
        f"reminder:{step.game_id}:{step.number}:{position}:{hours:g}:"
        f"{int(step.deadline.timestamp())}"
    )


def post_key(step: Step, position: int, hours: float) -> str:
    return (
        f"player-post:reminder:{step.game_id}:{step.number}:{position}:{hours:g}:"
        f"{int(step.deadline.timestamp())}"
    )


def push_key(step: Step, position: int, hours: float, subscription: PushSubscription) -> str:
    return (
        f"push:reminder:{step.game_id}:{step.number}:{position}:{hours:g}:"
        f"{int(step.deadline.timestamp())}:{push.endpoint_key(subscription)}"
    )


# A rung due: the step, the seat's position, the rung.
Due = tuple[Step, int, ladder.Rung]


def send_reminders(now: datetime) -> int:
    """Queue every reminder due at ``now`` (each seat's ladder: ``games.notify.ladder``);
    returns how many emails and pushes are waiting to be sent.

    Only the open steps whose ``remind_at`` has come, or is not worked out, are read (the
    index step_remind): a sweep costs what is due, not what is running. Each step read is
    then given the next moment one of its seats' rungs may come (``_remind_next``).

    The queries do not grow with the number of seats: one each for the steps, the orders
    in, the seats, their addresses' preferences (ladders, nights, digests), the browsers of
    the seats reminded by push, and the reminders already written, one locking the games
    still running, then one per game reminded for its links, a few for the outbox and the
    pushes, and one for the steps' next moments."""
    steps = list(
        Step.objects.filter(
            Q(remind_at__isnull=True) | Q(remind_at__lte=now),
            status=Step.Status.OPEN,
            deadline__gt=now,
            game__status=Game.Status.RUNNING,
        )
        .select_related("game__gm")
        .defer("state_before", "state_after", "game__state", "game__seed")
        .order_by("pk")
    )
    if not steps:
        return 0
    looked = {step.pk: step for step in steps}
    owed = _owed(looked)
    seats = _seats(looked)
    preferences = {
        preference.email: preference
        for preference in EmailPreference.objects.filter(
            email__in={
                email_choices.normalise(seat.email)
                for by_position in seats.values()
                for seat in by_position.values()
            }
        )
    }
    ladders: dict[int, tuple[list[ladder.Rung], quiet.Night | None]] = {}
    for by_position in seats.values():
        for seat in by_position.values():
            preference = preferences.get(email_choices.normalise(seat.email))
            ladders[seat.pk] = (ladder.of_seat(seat, preference)[0], quiet.night_of(preference))
    due: list[Due] = []
    for step in steps:
        for position in sorted(owed[step.pk] & seats[step.game_id].keys()):
            rungs, night = ladders[seats[step.game_id][position].pk]
            for rung in ladder.due(
                rungs, opened_at=step.opened_at, deadline=step.deadline, now=now, night=night
            ):
                due.append((step, position, rung))
    queued = _queue(due, seats, preferences, now) if due else 0
    _remind_next(steps, seats, ladders, now)
    return queued


def _remind_next(
    steps: list[Step],
    seats: dict[int, dict[int, Seat]],
    ladders: dict[int, tuple[list[ladder.Rung], quiet.Night | None]],
    now: datetime,
) -> None:
    """Each step of ``steps`` gets the first moment after ``now`` a rung of one of its
    game's seats may come (whether or not the seat owes an order now: an order can be
    withdrawn), or its deadline when none can. One transaction per page of steps, each step
    only while its deadline and ``remind_at`` are still what the sweep read: a change made
    meanwhile (``remind_again``) is not overwritten, and the next sweep works it out."""
    moments: list[When] = []
    for step in steps:
        moment = step.deadline
        for seat in seats[step.game_id].values():
            rungs, night = ladders[seat.pk]
            for at in ladder.moments(
                rungs, opened_at=step.opened_at, deadline=step.deadline, night=night
            ):
                if now < at < moment:
                    moment = at
        read = Q(remind_at__isnull=True) if step.remind_at is None else Q(remind_at=step.remind_at)
        moments.append(When(Q(pk=step.pk, deadline=step.deadline) & read, then=Value(moment)))
    for start in range(0, len(moments), REMIND_PAGE):
        page = moments[start : start + REMIND_PAGE]
        wanted = [step.pk for step in steps[start : start + REMIND_PAGE]]
        with transaction.atomic():
            # A step whose game a resolution holds is skipped, not waited for: the sweep
            # would hold the page's other steps meanwhile, and every resolution that
            # reached one of them would wait in turn (a deadline rush's steps). A skipped
            # step keeps its mark, and the next sweep looks at it again.
            free = list(
                Step.objects.select_for_update(skip_locked=True)
                .filter(pk__in=wanted)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            Step.objects.filter(pk__in=free).update(remind_at=Case(*page, default=F("remind_at")))


# Steps given their next moment in one statement (the first sweep after an upgrade works out
# every open step's).
REMIND_PAGE = 500


def remind_again(*, games: Iterable[int] = (), emails: Iterable[str] = ()) -> int:
    """The open steps of ``games``, and of the games where an address of ``emails`` has a
    seat, are looked at by the next sweep: what their next reminder depends on changed (a
    deadline, an order withdrawn, a ladder, a night, a digest chosen or given up, an
    address). Returns how many steps."""
    wanted = Q(game_id__in=sorted(set(games)))
    addresses = sorted({email_choices.normalise(email) for email in emails})
    if addresses:
        wanted |= Q(
            game_id__in=Seat.objects.filter(
                reduce(operator.or_, (Q(email__iexact=address) for address in addresses))
            ).values("game_id")
        )
    return Step.objects.filter(wanted, status=Step.Status.OPEN).update(remind_at=None)


def _owed(due: dict[int, Step]) -> dict[int, set[int]]:
    """Step id -> the positions prompted in the step that have sent no order yet."""
    answered: dict[int, set[int]] = defaultdict(set)
    orders = (
        Order.objects.filter(step_id__in=due)
        .exclude(source=Order.Source.DEFAULT)
        .values_list("step_id", "seat__position")
    )
    for step_id, position in orders:
        answered[step_id].add(position)
    return {step_id: set(step.prompted_seats) - answered[step_id] for step_id, step in due.items()}


def _seats(steps: dict[int, Step]) -> dict[int, dict[int, Seat]]:
    """Game id -> position -> the seats of the games of ``steps``."""
    games = {step.game_id: step.game for step in steps.values()}
    seats: dict[int, dict[int, Seat]] = {game_id: {} for game_id in games}
    for seat in Seat.objects.filter(game_id__in=games):
        seat.game = games[seat.game_id]
        seats[seat.game_id][seat.position] = seat
    return seats


def _queue(
    due: list[Due],
    seats: dict[int, dict[int, Seat]],
    preferences: dict[str, EmailPreference],
    now: datetime,
) -> int:
    """The emails and pushes of the rungs ``due`` not written yet, in one transaction. A
    rung goes by a channel that works (``channels``): a push rung of a seat no browser takes
    pushes for goes by email, an email rung of an address that bounces by push when a
    browser takes them. An address that chose a daily digest, or none, gets no reminder of
    its own; the webhooks hear of every one."""

    def quiet_address(step: Step, position: int) -> bool:
        preference = preferences.get(email_choices.normalise(seats[step.game_id][position].email))
        return preference is not None and (preference.digest or preference.no_reminders)

    maybe_pushed = [
        seats[step.game_id][position]
        for step, position, rung in due
        if rung.channel == ladder.PUSH or seats[step.game_id][position].email_failing
    ]
    browsers = push.by_seat(maybe_pushed if push.enabled() else [])
    hooks = player_hooks.of_addresses(
        [
            seats[step.game_id][position].email
            for step, position, rung in due
            if rung.channel == ladder.WEBHOOK
        ]
    )
    emails: dict[str, tuple[Step, int, float]] = {}
    pushes: dict[str, tuple[Step, int, float, PushSubscription]] = {}
    posts: dict[str, tuple[Step, int, float, PlayerWebhook]] = {}
    # What was decided for the player (games.notify.ledger), by the keys of the rung's rows.
    decided: dict[tuple[str, ...], list[Decision]] = {}
    for step, position, rung in due:
        if quiet_address(step, position):
            continue
        seat = seats[step.game_id][position]
        working = [found for found in browsers.get(seat.pk, []) if channels.push_works(found)]
        hook = hooks.get(email_choices.normalise(seat.email))
        keys: tuple[str, ...]
        if rung.channel == ladder.WEBHOOK and hook is not None and player_hooks.works(hook):
            keys = (post_key(step, position, rung.hours),)
            posts[keys[0]] = (step, position, rung.hours, hook)
            used = ladder.WEBHOOK
        elif working and (rung.channel != ladder.EMAIL or seat.email_failing):
            keys = tuple(push_key(step, position, rung.hours, found) for found in working)
            for key, subscription in zip(keys, working, strict=True):
                pushes[key] = (step, position, rung.hours, subscription)
            used = ladder.PUSH
        else:
            keys = (reminder_key(step, position, rung.hours),)
            emails[keys[0]] = (step, position, rung.hours)
            used = ladder.EMAIL
        preference = preferences.get(email_choices.normalise(seat.email))
        decided[keys] = _decisions(step, seat, rung, used, quiet.night_of(preference), now)
    written = set(
        OutboundEmail.objects.filter(dedupe_key__in=emails).values_list("dedupe_key", flat=True)
    )
    if pushes:
        written |= set(
            PushDelivery.objects.filter(dedupe_key__in=pushes).values_list("dedupe_key", flat=True)
        )
    if posts:
        written |= set(
            PlayerPost.objects.filter(dedupe_key__in=posts).values_list("dedupe_key", flat=True)
        )
    posts = {key: item for key, item in posts.items() if key not in written}
    emails = {key: item for key, item in emails.items() if key not in written}
    pushes = {key: item for key, item in pushes.items() if key not in written}
    notes = [
        row
        for keys, rows in decided.items()
        if any(key in emails or key in pushes or key in posts for key in keys)
        for row in rows
    ]
    heard = sorted(
        {
            (step.pk, rung.hours, position): (step, rung.hours, position)
            for step, position, rung in due
        }.values(),
        key=lambda item: (item[0].pk, item[2], item[1]),
    )
    games: dict[int, Game] = {step.game_id: step.game for step, _, _ in due}
    with transaction.atomic():
        # The games still running, locked to the end of the transaction: a game that ended
        # since the steps were read gets no reminder, and one cannot end before the
        # reminders are written (its end takes back those not sent: withdraw_deadlines).
        running = set(
            Game.objects.select_for_update()
            .filter(pk__in=sorted(games), status=Game.Status.RUNNING)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        emails = {key: item for key, item in emails.items() if item[0].game_id in running}
        pushes = {key: item for key, item in pushes.items() if item[0].game_id in running}
        posts = {key: item for key, item in posts.items() if item[0].game_id in running}
        mailed: dict[int, list[Seat]] = defaultdict(list)
        for step, position, _ in emails.values():
            if seats[step.game_id][position] not in mailed[step.game_id]:
                mailed[step.game_id].append(seats[step.game_id][position])
        tokens = {game_id: access.mint(found, now=now) for game_id, found in mailed.items()}
        rows = [
            _reminder(step, seats[step.game_id][position], hours, tokens[step.game_id][position])
            for step, position, hours in emails.values()
        ]
        push_rows = [
            push.reminder_row(step, seats[step.game_id][position], hours, subscription, key, now)
            for key, (step, position, hours, subscription) in pushes.items()
        ]
        # The webhooks hear of every reminder, a digest's address's too (once each).
        webhooks.reminder_events([item for item in heard if item[0].game_id in running], now)
        ledger.write([row for row in notes if row.game_id in running])
        post_rows = [
            player_hooks.post_row(
                hook,
                step.game_id,
                key,
                push.reminder_payload(step, seats[step.game_id][position], hours),
                now,
            )
            for key, (step, position, hours, hook) in posts.items()
        ]
        queued = len(queueing.queue_once(rows)) if rows else 0
        return queued + len(push.write(push_rows)) + len(player_hooks.write(post_rows))


def _decisions(
    step: Step,
    seat: Seat,
    rung: ladder.Rung,
    used: str,
    night: quiet.Night | None,
    now: datetime,
) -> list[Decision]:
    """The ledger's rows of a rung sent: moved out of the player's night, or sent by
    another channel than the ladder's."""
    rows = []
    meant = step.deadline - timedelta(hours=rung.hours)
    at = quiet.send_time(meant, step.deadline, night)
    if night is not None and at != meant:
        rows.append(
            ledger.note(
                step.game,
                seat,
                Decision.Kind.HELD,
                now,
                step.number,
                hours=rung.hours,
                at=at.isoformat(),
                night=night.said(),
            )
        )
    if used != rung.channel:
        rows.append(
            ledger.note(
                step.game,
                seat,
                Decision.Kind.MOVED,
                now,
                step.number,
                hours=rung.hours,
                to=used,
                meant=rung.channel,
                reason=seat.email_failing,
            )
        )
    return rows


def _reminder(step: Step, seat: Seat, hours: int | float, token: str) -> OutboundEmail:
    with translation.override(seat.speaks):
        return _reminder_in_language(step, seat, hours, token)


def _reminder_in_language(step: Step, seat: Seat, hours: int | float, token: str) -> OutboundEmail:
    game = step.game
    return building.build(
        "reminder",
        to=seat.email,
        dedupe_key=reminder_key(step, seat.position, hours),
        headers=access.stop_headers(seat, "reminders"),
        context={
            "game": game,
            "engine": registry.get(game.engine),
            "seat": seat,
            "step": step,
            "hours": hours,
            "deadline": schedule.local_time(step.deadline, seat.zone),
            "owed": words.owed(step.prompts, seat.position),
            "link": access.url(token),
            "stop_url": access.stop_url(seat, "reminders"),
        },
        # The same thread and Reply-To as the seat's reports (games.notify.reports).
        game=game,
        thread=f"game-{game.pk}-seat-{seat.position}",
        reply_to=access.reply_address(seat) or game.gm.email or None,
    )


# The emails of one game that say a deadline: taken back, unsent, when the game ends.
DEADLINE_KINDS = ("reminder", "deadline")


def withdraw_deadlines(game: Game) -> int:
    """The game is over (its finishing transaction): its reminders and deadline changes
    not yet sent are taken back, so that none quotes a deadline after it; a reminder task
    finds nothing to send. Returns how many."""
    return queueing.withdraw(game.pk, DEADLINE_KINDS)


# --- the daily digest ------------------------------------------------------------------------


# How an address gets its reminders: the values of ReminderChoiceForm's choice.
EACH, DIGEST, NONE = "0", "1", "off"


def choice_of(choice: EmailPreference | None) -> dict[str, str]:
    """An address's current choice (its saved preferences, or None), as the form's
    initial data."""
    if choice is None:
        return {"digest": EACH, "hour": "8"}
    way = NONE if choice.no_reminders else DIGEST if choice.digest else EACH
    return {"digest": way, "hour": str(choice.hour)}


def choose(seat: Seat, *, way: str, hour: int | None = None) -> EmailPreference:
    """The reminders of the seat's address, in every game: one email per reminder
    (EACH), one daily digest at ``hour`` of the seat's zone (DIGEST), or none (NONE).
    Without ``hour``, the address keeps its own (8:00 for a new one)."""
    return choose_for_address(seat.email, way=way, hour=hour, time_zone=seat.zone)


def choose_for_address(
    email: str, *, way: str, hour: int | None = None, time_zone: str
) -> EmailPreference:
    """``choose`` for an address itself (a signed-in player's settings, games.community.players):
    the digest's hour is of ``time_zone``."""
    defaults: dict[str, Any] = {
        "digest": way == DIGEST,
        "no_reminders": way == NONE,
        "time_zone": time_zone,
    }
    if hour is not None:
        defaults["hour"] = hour
    choice, _ = EmailPreference.objects.update_or_create(
        email=email_choices.normalise(email), defaults=defaults
    )
    remind_again(emails=[email])
    return choice


def quiet_of(choice: EmailPreference | None) -> dict[str, Any]:
    """An address's quiet hours (its saved preferences, or None), as QuietHoursForm's
    initial data."""
    night = quiet.night_of(choice)
    if night is None:
        return {"quiet": False, "start": "22:00", "end": "07:00"}
    return {"quiet": True, "start": f"{night.start:%H:%M}", "end": f"{night.end:%H:%M}"}


def choose_quiet(seat: Seat, *, start: time | None, end: time | None) -> EmailPreference:
    """The quiet hours of the seat's address, in every game, from ``start`` to ``end`` in
    the seat's zone (``quiet.send_time``); None for both: none."""
    choice, _ = EmailPreference.objects.update_or_create(
        email=email_choices.normalise(seat.email),
        defaults={"quiet_from": start, "quiet_until": end, "time_zone": seat.zone},
    )
    remind_again(emails=[seat.email])
    return choice


def digest_key(email: str, day: str) -> str:
    return f"digest:{email}:{day}"


def send_digests(now: datetime) -> int:
    """Queue today's digest of every address whose hour has come; returns how many. A
    digest lists only orders still owed; with none owed, nothing is sent that day."""
    choices = list(EmailPreference.objects.filter(digest=True, no_reminders=False))
    due = {}
    for choice in choices:
        local = now.astimezone(schedule.zone(choice.time_zone))
        if local.hour >= choice.hour:
            due[digest_key(choice.email, local.date().isoformat())] = choice
    if not due:
        return 0
    written = set(
        OutboundEmail.objects.filter(dedupe_key__in=due).values_list("dedupe_key", flat=True)
    )
    rows = []
    with transaction.atomic():
        for key, choice in due.items():
            if key in written:
                continue
            owed = _owed_by_address(choice.email, now)
            if owed:
                rows.append(_digest(choice, key, owed, now))
        return len(queueing.queue_once(rows)) if rows else 0


def _owed_by_address(email: str, now: datetime) -> list[dict[str, Any]]:
    """Each open step of a running game where a seat with ``email`` owes an order."""
    seats = list(
        Seat.objects.filter(email__iexact=email, game__status=Game.Status.RUNNING)
        .select_related("game")
        .defer("game__state", "game__seed")
    )
    steps = {
        step.game_id: step
        for step in Step.objects.filter(
            game_id__in=[seat.game_id for seat in seats],
            status=Step.Status.OPEN,
            deadline__gt=now,
        ).defer("state_before", "state_after")
    }
    answered = set(
        Order.objects.filter(step__in=steps.values())
        .exclude(source=Order.Source.DEFAULT)
        .values_list("step_id", "seat_id")
    )
    owed: list[dict[str, Any]] = []
    for seat in seats:
        step = steps.get(seat.game_id)
        if step is None or seat.position not in step.prompted_seats:
            continue
        if (step.pk, seat.pk) in answered:
            continue
        owed.append({"seat": seat, "game": seat.game, "step": step, "when": step.deadline})
    owed.sort(key=lambda item: (item["when"], item["game"].pk))
    return owed


def _digest(
    choice: EmailPreference, key: str, owed: list[dict[str, Any]], now: datetime
) -> OutboundEmail:
    with translation.override(languages.of_seats(item["seat"] for item in owed)):
        return _digest_in_language(key, owed, now)


def _digest_in_language(key: str, owed: list[dict[str, Any]], now: datetime) -> OutboundEmail:
    tokens = {item["seat"].pk: access.mint([item["seat"]], now=now) for item in owed}
    for item in owed:
        seat, step = item["seat"], item["step"]
        item["deadline"] = schedule.local_time(step.deadline, seat.zone)
        item["prompts"] = words.owed(step.prompts, seat.position)
        item["link"] = access.url(tokens[seat.pk][seat.position])
    return building.build(
        "digest",
        to=owed[0]["seat"].email,
        dedupe_key=key,
        headers=access.stop_headers(owed[0]["seat"], "reminders"),
        context={
            "owed": owed,
            "count": len(owed),
            "stop_url": access.stop_url(owed[0]["seat"], "reminders"),
        },
    )
