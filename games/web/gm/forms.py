"""Forms of the GM panel. They turn what the GM typed into the arguments of one
``games.postal`` function and say, next to the field, what is wrong; the rules themselves
(options, player counts, orders) are checked by postal and the engines."""

from __future__ import annotations

import re
from typing import Any
from zoneinfo import ZoneInfo

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from games import postal
from games.engines import registry
from games.lib import schedule
from games.models import (
    GM_REASON_LENGTH,
    TEMPLATE_NAME_LENGTH,
    AbsencePolicy,
    Game,
    Publicity,
    Seat,
    SignUp,
    SignUpMode,
    Webhook,
)
from games.notify import webhooks
from games.records import paper
from games.web.options import OptionsFields
from moderator import bidi

DATETIME_LOCAL = "%Y-%m-%dT%H:%M"
NAME_LENGTH = Seat._meta.get_field("name").max_length or 60
EMAIL_LENGTH = 254
_ANGLE = re.compile(r"(?P<name>[^<>]*?)\s*<(?P<email>[^<>]*)>")
_COMMA = re.compile(r"(?P<name>[^,<>]*),(?P<email>.*)")


def _control_free(value: str) -> bool:
    return not any(ord(char) < 32 or char in "\x7f\u2028\u2029\x85" for char in value)


def _direction_kept(value: str, what: str) -> None:
    """ValidationError when ``value`` holds a bidirectional override (``moderator.bidi``)."""
    if (refused := bidi.refusal(value, what)) is not None:
        raise ValidationError(refused)


def parse_player(line: str, number: int) -> postal.Player:
    """One line of the players box: ``name <email>`` or ``name, email``."""
    where = f"line {number}"
    if not _control_free(line):
        raise ValidationError(f"{where}: control characters are not allowed")
    _direction_kept(line, where)
    match = _ANGLE.fullmatch(line.strip()) or _COMMA.fullmatch(line.strip())
    if match is None:
        raise ValidationError(f"{where}: write 'name <email>' or 'name, email', not {line!r}")
    name, email = match["name"].strip(), match["email"].strip()
    if not name:
        raise ValidationError(f"{where}: the name is missing")
    if len(name) > NAME_LENGTH:
        raise ValidationError(f"{where}: a name has at most {NAME_LENGTH} characters")
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(f"{where}: {email!r} is not one email address") from None
    if len(email) > EMAIL_LENGTH:
        raise ValidationError(f"{where}: the address is too long")
    return postal.Player(name=name, email=email)


PLAYERS_HELP = format_html(
    "One player per line, name and email address: {} or {}.",
    mark_safe("<code>Ann &lt;ann@example.org&gt;</code>"),
    mark_safe("<code>Ann, ann@example.org</code>"),
)


class DeadlinesForm(forms.Form):
    """A form with a ``schedule`` in the GM's words and a ``time_zone``: both read the
    same way wherever a GM sets a rhythm (a game, a campaign's games)."""

    def clean_time_zone(self) -> str:
        name: str = self.cleaned_data["time_zone"].strip()
        try:
            schedule.zone(name)
        except schedule.ScheduleError as error:
            raise ValidationError(str(error)) from None
        return name

    def clean_schedule(self) -> dict[str, Any]:
        try:
            return schedule.parse(self.cleaned_data["schedule"])
        except schedule.ScheduleError as error:
            raise ValidationError(str(error)) from None


MISSED_FIELDS = (
    "extensions",
    "extension_hours",
    "absence_policy",
    "absence_cap_days",
    "civil_disorder_after",
    "offer_seats",
    "avoid_nights",
)


def public_field(required: bool = True) -> forms.ChoiceField:
    """Who may watch the game (``Publicity``): on the new-game form (where leaving it out
    keeps the default) and the game page."""
    return forms.ChoiceField(
        required=required,
        choices=Publicity.choices,
        initial=Publicity.AUTO,
        label="Spectators",
        help_text="A public game shows everybody its board and public events, never a "
        "player's hidden information before it is over.",
    )


ALLOWED, OFF = "allowed", "off"


def private_press_field(required: bool = True) -> forms.ChoiceField:
    """Whether players may write privately to one another (``Game.private_press``,
    games.community.press): on the new-game form (where leaving it out keeps the default) and the
    game page."""
    return forms.ChoiceField(
        required=required,
        choices=[(ALLOWED, _("allowed")), (OFF, _("off"))],
        initial=ALLOWED,
        label=_("Private messages between players"),
        help_text=_(
            "Off, every message goes to every player. Either way you can read every "
            "message of the game, and the players are told so."
        ),
    )


def language_field(required: bool = True) -> forms.ChoiceField:
    """The language the game's players are written to in (``Game.language``;
    docs/languages.md): on the new-game form and the game page."""
    return forms.ChoiceField(
        required=required,
        choices=settings.LANGUAGES,
        initial=settings.LANGUAGE_CODE,
        label="Language",
        help_text="Of the players' pages and emails; each player may choose their own.",
    )


class NewGameForm(DeadlinesForm):
    """What every new game's form asks: its title and its rhythm; ``clean_players`` reads
    a players box (``parse_player``), which each form declares its own way."""

    title = forms.CharField(max_length=Game._meta.get_field("title").max_length or 200)
    time_zone = forms.CharField(
        max_length=64,
        initial="UTC",
        help_text="The zone deadlines are set in, e.g. Europe/Berlin or America/New_York.",
    )
    schedule = forms.CharField(
        max_length=200,
        initial="every 48 hours",
        label="Schedule",
        help_text="'every 48 hours', 'daily at 18:00' or 'mondays and thursdays at 20:00'.",
    )
    early_processing = forms.BooleanField(
        required=False,
        initial=True,
        label="Resolve early",
        help_text="Resolve a step as soon as every order is in, before the deadline.",
    )

    def rhythm_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("schedule", "time_zone", "early_processing")]

    def clean_title(self) -> str:
        title: str = self.cleaned_data["title"]
        if not _control_free(title):
            raise ValidationError("the title must be a single line")
        _direction_kept(title, "the title")
        return title

    def clean_players(self) -> list[postal.Player]:
        players: list[postal.Player] = []
        seen: set[str] = set()
        for number, line in enumerate(self.cleaned_data["players"].splitlines(), start=1):
            if not line.strip():
                continue
            player = parse_player(line, number)
            if player.name.lower() in seen:
                raise ValidationError(f"line {number}: two players are called {player.name!r}")
            seen.add(player.name.lower())
            players.append(player)
        return players


class CreateGameForm(NewGameForm):
    """A new game of one game and profile: its title, the profile's options as fields
    (``games.web.options``), its rhythm and its players."""

    signup = forms.ChoiceField(
        choices=SignUpMode.choices,
        required=False,
        label="How players join",
        help_text="An open game is listed on the site's open games, where anybody may sign up.",
    )
    seats_wanted = forms.IntegerField(required=False, label="Seats")
    players = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 6, "placeholder": "Ann <ann@example.org>\nBob, bob@example.org"}
        ),
        help_text=format_html(
            "{} In an open game they take the first seats, and the box may be empty.",
            PLAYERS_HELP,
        ),
    )
    public = public_field(required=False)
    private_press = private_press_field(required=False)
    language = language_field(required=False)
    rated = forms.BooleanField(
        required=False,
        initial=False,
        label="Rated: the result counts in the game's ranking",
        help_text="Each player's rating in this game moves with their finishing place.",
    )

    # Missed turns and absences (postal.MissedTurns).
    extensions = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=postal.MOST_EXTENSIONS,
        initial=0,
        label="Automatic extensions per seat",
        help_text="A missed deadline first spends one: the deadline moves on for everyone.",
    )
    extension_hours = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=7 * 24,
        initial=24,
        label="Length of an extension (hours)",
    )
    absence_policy = forms.ChoiceField(
        required=False,
        choices=AbsencePolicy.choices,
        initial=AbsencePolicy.EXTEND,
        label="While a player is away",
        help_text="Players declare absences on their pages; everyone sees 'away until ...'.",
    )
    absence_cap_days = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=60,
        initial=7,
        label="At most this many days of waiting per seat (in all)",
    )
    civil_disorder_after = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=50,
        initial=3,
        label="Civil disorder after this many missed turns in a row",
        help_text="You are told by email; the game goes on with the defaults. 0: never.",
    )
    offer_seats = forms.BooleanField(
        required=False,
        initial=False,
        label="Offer a seat in civil disorder on the list of open games",
        help_text="You approve the new player.",
    )
    avoid_nights = forms.BooleanField(
        required=False,
        initial=False,
        label="Move a deadline out of everyone's night",
        help_text=(
            "A deadline that falls in the quiet hours of every player moves to when the "
            "first of them wakes. Players set their quiet hours on their settings pages."
        ),
    )

    def __init__(
        self,
        *args: Any,
        game: str,
        profile: str,
        chosen: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.game = game
        self.counts = profile_players(game, profile)
        seats = self.fields["seats_wanted"]
        seats.widget.attrs.update(min=self.counts.low, max=self.counts.high)
        seats.help_text = (
            f"For an open game: how many players it takes ({self.counts.words()}). It starts "
            "when the last seat is taken (first come, first seated) or when you start it."
        )
        self.option_fields = OptionsFields(game, profile)
        self.option_fields.add_to(self, chosen)

    def option_boxes(self) -> list[forms.BoundField]:
        return self.option_fields.bound(self)

    def main_fields(self) -> list[forms.BoundField]:
        return [
            self[name]
            for name in (
                "title",
                "signup",
                "seats_wanted",
                "players",
                "public",
                "private_press",
                "language",
                "rated",
            )
        ]

    def missed_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in MISSED_FIELDS]

    def missed_turns(self) -> postal.MissedTurns:
        """What the GM chose about missed turns, once the form is valid."""
        data = self.cleaned_data
        given = postal.MissedTurns()  # a field left empty keeps its default

        def value(name: str, default: Any) -> Any:
            return default if data.get(name) in (None, "") else data[name]

        return postal.MissedTurns(
            extensions=value("extensions", given.extensions),
            extension_hours=value("extension_hours", given.extension_hours),
            absence_policy=value("absence_policy", given.absence_policy),
            absence_cap_hours=value("absence_cap_days", given.absence_cap_hours // 24) * 24,
            civil_disorder_after=value("civil_disorder_after", given.civil_disorder_after),
            offer_seats=bool(data.get("offer_seats")),
            avoid_nights=bool(data.get("avoid_nights")),
        )

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if data is not None:
            self._check_seats(data)
        options = self.option_fields.data(self)
        if data is not None and options is not None and self.option_fields.check(self, options):
            data["options"] = options
        return data

    def _check_seats(self, data: dict[str, Any]) -> None:
        """An invitation-only game names its players; an open game has its seats, within
        the game's player counts and more than the players invited."""
        check_seats(self, self.counts, data)


def profile_players(game: str, profile: str) -> registry.Players:
    """How many players the profile ``profile`` ("" the game's first) of ``game`` takes."""
    chosen = registry.settings(game)
    return registry.players(game, {chosen.profile_key: profile} if chosen.profile_key else {})


def check_seats(form: forms.Form, counts: registry.Players, data: dict[str, Any]) -> None:
    """The seats of a game not yet started, in the words of its way to play (``counts``):
    an invitation-only game names as many players as it takes; an open game has its
    number of seats within them, more than the players invited. Each error goes to its
    field, so that nothing is created or changed."""
    players = data.get("players")
    if players is None or "signup" not in data:
        return
    if not data.get("signup"):
        if not players:
            form.add_error(
                "players", f"name the players: {counts.words()}; or open the game for sign-up"
            )
        elif not counts.allows(len(players)):
            form.add_error("players", f"{counts.words()}, not {len(players)}")
        return
    wanted = data.get("seats_wanted")
    if wanted is None:
        form.add_error("seats_wanted", f"say how many seats the game has: {counts.words()}")
    elif not counts.allows(wanted):
        form.add_error("seats_wanted", f"{counts.words()}, not {wanted}")
    elif len(players) >= wanted:
        form.add_error(
            "players",
            f"the {len(players)} players you invite fill all {wanted} seats: leave a seat "
            "to sign up for, or let only the players you invite join",
        )


class EditGameForm(forms.Form):
    """A game not yet started, changed by its GM (``postal.change_recruiting``): its
    title, its invited players and, for an open game, its number of seats, checked in the
    words of its way to play."""

    title = NewGameForm.base_fields["title"]
    seats_wanted = forms.IntegerField(required=False, label="Seats")
    players = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 6, "placeholder": "Ann <ann@example.org>\nBob, bob@example.org"}
        ),
        help_text=format_html(
            "{} A player you keep keeps their seat and link; a player you take out is not "
            "told, and their link stops working; a new player gets their link when you "
            "invite the players.",
            PLAYERS_HELP,
        ),
    )

    clean_title = NewGameForm.clean_title
    clean_players = NewGameForm.clean_players

    def __init__(self, *args: Any, game: Game, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.game = game
        self.counts = registry.players(game.engine, game.options)
        seats = self.fields["seats_wanted"]
        seats.widget.attrs.update(min=self.counts.low, max=self.counts.high)
        seats.help_text = f"How many players the open game takes ({self.counts.words()})."
        if game.signup == SignUpMode.CLOSED:
            del self.fields["seats_wanted"]

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if data is not None:
            check_seats(self, self.counts, {**data, "signup": self.game.signup})
        return data


# The largest record file a GM may upload: a long game's record is a few hundred kB.
RECORD_BYTES = 2 * 1024 * 1024


class ImportGameForm(NewGameForm):
    """A game that was running on paper, continued here (``postal.import_game``): its
    title, its history so far (``games.records.paper``: pasted or uploaded, the line format or a
    JSON record), its players with their addresses in seat order, and its rhythm from now
    on. Valid once the history reads as a record; whether it replays is postal's check."""

    record = forms.CharField(
        required=False,
        strip=False,
        label="The game so far",
        widget=forms.Textarea(
            attrs={
                "rows": 14,
                "class": "record",
                "spellcheck": "false",
                "placeholder": "game: choice\nplayers: Ann, Bob\ndice: 3 5 2 6 5 5 5 4 1 5\n"
                "Ann: W5 2+6 3+5\n     W1 4+5 5+5\ndeadline",
            }
        ),
        help_text="One move per line, as the example below shows, or a JSON game record.",
    )
    record_file = forms.FileField(
        required=False,
        label="Or upload it",
        help_text="A text file in the same format (.txt), or a JSON record (.json).",
    )
    players = forms.CharField(
        widget=forms.Textarea(
            attrs={"rows": 4, "placeholder": "Ann <ann@example.org>\nBob, bob@example.org"}
        ),
        help_text=format_html("{} In seat order, with the names the record uses.", PLAYERS_HELP),
    )

    def main_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("title", "record", "record_file", "players")]

    def clean_record_file(self) -> str:
        upload = self.cleaned_data.get("record_file")
        if upload is None:
            return ""
        if upload.size is not None and upload.size > RECORD_BYTES:
            raise ValidationError(
                f"the file has {upload.size // 1024} kB; a record has at most "
                f"{RECORD_BYTES // 1024} kB"
            )
        try:
            text: str = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError(
                "the file is not text (UTF-8): upload the record itself"
            ) from None
        return text

    def clean(self) -> dict[str, Any] | None:
        data = super().clean()
        if data is None:
            return data
        pasted, uploaded = data.get("record", ""), data.get("record_file", "")
        if pasted.strip() and uploaded.strip():
            self.add_error("record", "paste the record or upload it, not both")
            return data
        text = pasted if pasted.strip() else uploaded
        if not text.strip():
            if "record_file" not in self.errors:
                self.add_error("record", "paste the game so far, or upload its record")
            return data
        names = [player.name for player in data.get("players") or []]
        try:
            data["history"] = paper.read(text, names)
        except paper.PaperError as error:
            self.add_error("record", error.message)
        return data


class GameForm(forms.Form):
    """An action form of one game; seat choices come from the game. ``by``: the id of the
    user who acts, set by the view."""

    by: int | None = None

    def __init__(self, *args: Any, game: Game, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.game = game


class WebhookFields(forms.Form):
    """A webhook (docs/webhooks.md) of a game or a campaign: an address (blank keeps the
    current one, which pages never show: it may hold a secret), its format, and whether it
    is on. ``has_hook``: whether there is a current one."""

    url = forms.CharField(
        max_length=500,
        required=False,
        label="Webhook URL",
        help_text="https:// only.",
    )
    format = forms.ChoiceField(choices=Webhook.Format.choices, label="Format")
    active = forms.BooleanField(required=False, initial=True, label="Send events")

    def __init__(self, *args: Any, has_hook: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.has_hook = has_hook
        if has_hook:
            self.fields["url"].help_text = "https:// only; leave blank to keep the current one."

    def clean_url(self) -> str:
        url = str(self.cleaned_data["url"]).strip()
        if not url and not self.has_hook:
            raise forms.ValidationError("enter the webhook's address, starting with https://.")
        if not url:
            return ""
        try:
            return webhooks.check_url(url)
        except webhooks.BadURL as error:
            raise forms.ValidationError(error.message) from None


class WebhookForm(WebhookFields, GameForm):
    """The game's webhook, as a GM panel action of the game."""

    def __init__(self, *args: Any, game: Game, **kwargs: Any) -> None:
        has_hook = Webhook.objects.filter(game=game).exists()
        super().__init__(*args, has_hook=has_hook, game=game, **kwargs)


class ReasonForm(GameForm):
    """A GM action the players are told of in the game's log (``GMAction``), with the
    GM's reason, optional."""

    reason = forms.CharField(
        required=False,
        max_length=GM_REASON_LENGTH,
        label="Reason (players see it)",
        widget=forms.TextInput(attrs={"placeholder": "optional"}),
    )

    def clean_reason(self) -> str:
        reason: str = self.cleaned_data["reason"]
        if not _control_free(reason):
            raise ValidationError("the reason must be a single line without control characters")
        _direction_kept(reason, "the reason")
        return reason


# What a GM action on the current step says when its post names no step it was shown.
NO_STEP_SHOWN = _(
    "nothing was done: the form did not say which step it was for; reload the game page "
    "and try again"
)


class ShownStep(forms.Form):
    """A GM action on the current step carries the step the GM's page showed (a hidden
    field the page fills in); its postal function checks it under the game's lock, so a
    double click or a second GM changes nothing once the game has moved on
    (``postal.check_shown_step``). A post without a step number changes nothing either."""

    step = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_step(self) -> int:
        raw = str(self.cleaned_data["step"]).strip()
        # ASCII digits only (int() would read "٣" as 3), and no more than a step has.
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
            raise ValidationError(NO_STEP_SHOWN)
        return int(raw)

    def shown_step(self) -> int:
        step: int = self.cleaned_data["step"]
        return step


class PublicForm(GameForm):
    """Who may watch the game at its public page and in the archive."""

    public = public_field()


class PrivatePressForm(GameForm):
    """Whether the game's players may write privately to one another (games.community.press)."""

    private_press = private_press_field()

    def allowed(self) -> bool:
        return bool(self.cleaned_data["private_press"] == ALLOWED)


class BotsForm(GameForm):
    """Whether programs may play the game's seats (a bot's token, docs/api.md)."""

    bots = forms.ChoiceField(
        label="Bots",
        choices=[("no", "No bots: every seat is played by a person"), ("yes", "Bots may play")],
        widget=forms.RadioSelect,
    )

    def allowed(self) -> bool:
        return bool(self.cleaned_data["bots"] == "yes")


class LanguageForm(GameForm):
    """The language of the game's players' pages and emails."""

    language = language_field()


class ResolveForm(ShownStep, ReasonForm):
    """Resolve the step the GM was shown now (``postal.resolve_now``), once confirmed on
    the page that names who has not ordered (``games.web.gm.resolve``): a post without
    ``confirmed`` resolves nothing and opens that page."""

    confirmed = forms.CharField(required=False, widget=forms.HiddenInput)

    def is_confirmed(self) -> bool:
        return self.cleaned_data.get("confirmed") == "yes"


class RollbackForm(ShownStep, ReasonForm):
    """Roll back the last resolved step (``postal.rollback``): the reason is required,
    since every player is emailed it. ``step``: the step the page offered to roll back."""

    reason = forms.CharField(
        max_length=GM_REASON_LENGTH,
        label="Reason (every player is emailed it)",
        error_messages={"required": "give the players a reason for rolling the step back"},
    )


class TemplateForm(GameForm):
    name = forms.CharField(max_length=TEMPLATE_NAME_LENGTH, label="Template name")

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        _direction_kept(name, "the name")
        return name


class SeatForm(GameForm):
    seat = forms.TypedChoiceField(coerce=int, choices=())

    def __init__(self, *args: Any, game: Game, **kwargs: Any) -> None:
        super().__init__(*args, game=game, **kwargs)
        self.names = {seat.position: seat.name for seat in game.seats.all()}
        seat_field = self.fields["seat"]
        assert isinstance(seat_field, forms.TypedChoiceField)
        seat_field.choices = list(self.names.items())

    def seat_name(self) -> str:
        return self.names[self.cleaned_data["seat"]]


class OrderForm(ShownStep, SeatForm, ReasonForm):
    field_order = ["step", "seat", "text", "reason"]

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), max_length=5000, strip=False, label="Order"
    )

    def clean_text(self) -> str:
        text: str = self.cleaned_data["text"]
        if not text.strip():
            raise ValidationError("the order is empty")
        return text


class ReplaceForm(ShownStep, SeatForm, ReasonForm):
    field_order = ["step", "seat", "name", "email", "reason"]

    name = forms.CharField(max_length=NAME_LENGTH, label="New name")
    email = forms.CharField(max_length=EMAIL_LENGTH, label="New email")


class SignUpForm(GameForm):
    """One sign-up of the game, for the GM's approve and decline."""

    signup = forms.TypedChoiceField(
        coerce=int,
        choices=(),
        label="Sign-up",
        error_messages={"invalid_choice": "that is not a sign-up of this game"},
    )

    def __init__(self, *args: Any, game: Game, **kwargs: Any) -> None:
        super().__init__(*args, game=game, **kwargs)
        signup_field = self.fields["signup"]
        assert isinstance(signup_field, forms.TypedChoiceField)
        signup_field.choices = [
            (signup.pk, signup.name) for signup in SignUp.objects.filter(game=game).only("name")
        ]


class ExtendForm(ShownStep, ReasonForm):
    """A new deadline typed as local time of the game's zone (a datetime-local input)."""

    deadline = forms.DateTimeField(
        input_formats=[DATETIME_LOCAL, "%Y-%m-%dT%H:%M:%S"],
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=DATETIME_LOCAL),
    )

    def full_clean(self) -> None:
        # DateTimeField makes the value aware in the current zone: make that the game's.
        with timezone.override(ZoneInfo(self.game.time_zone)):
            super().full_clean()


class SetOrderForm(ShownStep, ReasonForm):
    """The First Player host override (rules F-16): every player, first player first."""

    names = forms.CharField(
        label="Actual order",
        max_length=1000,
        help_text="Every player's name, first player first, separated by commas.",
    )

    def clean_names(self) -> list[str]:
        text = self.cleaned_data["names"]
        if not _control_free(text):
            raise ValidationError("control characters are not allowed")
        _direction_kept(text, "the actual order")
        return [name.strip() for name in text.split(",") if name.strip()]
