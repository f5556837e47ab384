"""Languages (docs/languages.md): a seat's page and emails speak its language (its own,
else its player's, else its game's), a signed-in player's pages theirs, the pages of
nobody in particular the browser's; dates and numbers in the language's form; and the
check that keeps the German catalogue complete."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polib
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import translation

from games import postal
from games.community import absences, players, reliability
from games.lib.schedule import local_time
from games.models import Game, Seat
from games.postal import access
from moderator import catalogue
from moderator.mail.models import OutboundEmail
from tests.factories import (
    GameFactory,
    GMFactory,
    choice_game,
    seat_page,
    settings_page,
    started_game,
)

pytestmark = pytest.mark.django_db

DEADLINE_DE = "Mi., 25. November 2026, 19:00 CET (18:00 UTC)"
DEADLINE_EN = "Wed 25 Nov 2026 19:00 CET (18:00 UTC)"


def german_and_english(now: datetime) -> Game:
    """A started Choice game in Europe/Berlin: ann's seat speaks German, bob's the game's
    English."""
    ann = postal.Player("ann", "ann@example.org", language="de")
    return started_game(now=now, players=[ann, "bob"], time_zone="Europe/Berlin")


def report(game: Game, position: int) -> OutboundEmail:
    return OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:{position}")


def headings(text: str) -> list[str]:
    """The headings of a text email: its lines in capitals."""
    return [line for line in text.splitlines() if line.isupper()]


def page_headings(html: str) -> list[str]:
    return re.findall(r"<h2[^>]*>(.*?)</h2>", html)


def log_in(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    response = client.post(f"/p/{access.mint([seat], now=now)[position]}/")
    assert response.status_code == 302


def messages_of(html: str) -> list[str]:
    found = re.search(r'<ul class="messages">(.*?)</ul>', html, re.S)
    assert found is not None
    return re.findall(r"<li[^>]*>(.*?)</li>", found.group(1))


# --- emails -----------------------------------------------------------------------------------


def test_a_german_seat_gets_its_report_in_german_and_an_english_seat_in_english(
    now: datetime,
) -> None:
    game = german_and_english(now)
    ann, bob = report(game, 0), report(game, 1)
    assert ann.subject == f"Test Choice hat begonnen, dein Zug ist fällig bis {DEADLINE_DE}"
    assert bob.subject == f"Test Choice has started, your order is due {DEADLINE_EN}"
    assert ann.text.splitlines()[:3] == [
        "Test Choice (Choice per Post), Postzug 1",
        "",
        "Hallo ann,",
    ]
    assert bob.text.splitlines()[:3] == [
        "Test Choice (Choice by post), postal turn 1",
        "",
        "Hello bob,",
    ]
    assert headings(ann.text) == [
        "WAS GESCHAH",
        "DAS SPIELFELD",
        "DEINE GEHEIMEN INFORMATIONEN",
        "WAS VON DIR FÄLLIG IST",
        "SO ZIEHST DU",
        "DIE WÜRFEL",
        "WIE OFT DU E-MAILS BEKOMMST",
    ]
    assert headings(bob.text) == [
        "WHAT HAPPENED",
        "THE BOARD",
        "YOUR PRIVATE INFORMATION",
        "WHAT YOU OWE",
        "HOW TO ORDER",
        "THE DICE",
        "HOW OFTEN YOU GET EMAIL",
    ]
    # The board's shared parts are rendered once per language, each seat its own.
    assert "  Abgabetermin: " + DEADLINE_DE in ann.text.splitlines()
    assert ann.text.count("Die Würfe dieser Runde (für alle gleich):") == 1
    assert bob.text.count("The rolls of this postal turn (the same for everybody):") == 1
    assert (ann.html[:60].count('<html lang="de">'), bob.html[:60].count('<html lang="en">')) == (
        1,
        1,
    )


def test_the_games_language_is_its_seats_unless_a_seat_chose_its_own(now: datetime) -> None:
    game = GameFactory.create(seats=2, language="de")
    Seat.objects.filter(game=game, position=1).update(language="en")
    postal.invite(game.pk, now=now)
    subjects = dict(
        OutboundEmail.objects.filter(kind="invite").values_list("to", "subject").order_by("to")
    )
    assert subjects == {
        "ann@example.org": "Test Choice: du bist zu Choice eingeladen",
        "bob@example.org": "Test Choice: you are invited to play Choice",
    }


def test_a_receipt_comes_in_the_seats_language(now: datetime) -> None:
    game = german_and_english(now)
    order = postal.accept_order(
        game_id=game.pk, position=0, text=_first_order(game), source="email", now=now
    )
    postal.write_receipts(now=now + timedelta(seconds=1))
    receipt = OutboundEmail.objects.get(dedupe_key=f"receipt:{order.pk}")
    assert receipt.subject == "Test Choice: Zug für Postzug 1 erhalten"
    assert receipt.text.splitlines()[2:4] == [
        "Dein Zug für Postzug 1 in „Test Choice“ ist am Mo., 23. November 2026, 19:00 CET "
        "(18:00 UTC)",
        "eingegangen und angenommen. Er lautet:",
    ]


def _first_order(game: Game) -> str:
    engine = game.rules
    game.refresh_from_db()
    state = engine.state_from_json(game.state)
    text: str = engine.canonical(state, 0, engine.default(state, 0))
    return text


def test_the_sign_in_email_follows_the_page_it_was_asked_from() -> None:
    Client(HTTP_ACCEPT_LANGUAGE="de").post("/signin/", {"email": "ann@example.org"})
    Client(HTTP_ACCEPT_LANGUAGE="en").post("/signin/", {"email": "bob@example.org"})
    subjects = dict(OutboundEmail.objects.filter(kind="signin").values_list("to", "subject"))
    assert subjects == {
        "ann@example.org": "Dein Anmeldelink und -code",
        "bob@example.org": "Your sign-in link and code",
    }


# --- pages ------------------------------------------------------------------------------------


def test_a_seat_page_speaks_its_seats_language_whatever_the_browser(now: datetime) -> None:
    game = german_and_english(now)
    ann, bob = Client(HTTP_ACCEPT_LANGUAGE="en"), Client(HTTP_ACCEPT_LANGUAGE="de")
    log_in(ann, game, 0, now)
    log_in(bob, game, 1, now)
    german = ann.get(seat_page(game, 0))
    english = bob.get(seat_page(game, 1))
    assert (german["Content-Language"], english["Content-Language"]) == ("de", "en")
    german_html, english_html = german.content.decode(), english.content.decode()
    assert german_html.splitlines()[1] == '<html lang="de">'
    assert english_html.splitlines()[1] == '<html lang="en">'
    assert page_headings(german_html)[:4] == [
        "Was von dir fällig ist",
        "Dein Zug",
        "Das Spielfeld",
        "Letzte Auswertung",
    ]
    assert page_headings(english_html)[:4] == [
        "What you owe",
        "Your order",
        "The board",
        "Latest report",
    ]
    assert f"<strong>Abgabetermin: {DEADLINE_DE}</strong>" in german_html
    # The footer names the setting that chose the language, not the browser's switcher.
    assert re.findall(r'<div id="languages">(.*?)</div>', german_html) == [
        f'<a href="{settings_page(game, 0)}#language-form">Sprache: Deutsch</a>'
    ]


def test_the_settings_page_chooses_its_language_and_bad_input_changes_nothing(
    now: datetime,
) -> None:
    game = german_and_english(now)
    client = Client()
    log_in(client, game, 1, now)
    url = f"/play/{game.pk}/1/language/"
    response = client.post(url, {"language": "fr"}, follow=True)
    assert messages_of(response.content.decode()) == [
        "Language of this seat&#x27;s page and emails: Choose one of the languages of the list. "
        "Nothing was changed."
    ]
    assert Seat.objects.get(game=game, position=1).language == ""
    response = client.post(url, {"language": "de"}, follow=True)
    assert response.redirect_chain == [(settings_page(game, 1), 302)]
    assert 'id="language-form"' in response.content.decode()
    assert messages_of(response.content.decode()) == [
        "Erledigt: die Seite und die E-Mails dieses Platzes sind jetzt auf Deutsch."
    ]
    assert Seat.objects.get(game=game, position=1).language == "de"
    client.post(url, {"language": ""})
    assert Seat.objects.get(game=game, position=1).speaks == "en"


def test_a_german_seats_refused_order_is_refused_in_german(now: datetime) -> None:
    game = german_and_english(now)
    client = Client()
    log_in(client, game, 0, now)
    postal.pause(game.pk, now=now)
    html = client.post(
        seat_page(game, 0),
        {"step": "1", "seat": "0", "entry": "text", "text": _first_order(game)},
    ).content.decode()
    found = re.search(r'<ul class="errors" id="text-errors"><li>(.*?)</li>', html)
    assert found is not None
    assert found.group(1) == (
        "der Spielleiter hat das Spiel pausiert, darum wurde nichts gespeichert; Züge werden "
        "wieder angenommen, wenn es weitergeht"
    )


def test_a_players_language_is_their_pages_and_their_seats(now: datetime) -> None:
    mine = german_and_english(now)
    over = GameFactory.create(seats=2, title="Over")
    Game.objects.filter(pk=over.pk).update(status=Game.Status.FINISHED)
    player = players.player_for("BOB@example.org", now=now)
    said = players.save_settings(
        player,
        players.Chosen(name="", time_zone="", reports="", reminders="", hour=None, language="de"),
    )
    assert said == ["your language is Deutsch, in all your games"]
    languages = dict(
        Seat.objects.filter(email="bob@example.org").values_list("game__title", "language")
    )
    assert languages == {"Test Choice": "de", "Over": ""}
    later = choice_game(2, title="Later")
    assert Seat.objects.get(game=later, position=1).language == "de"
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(player.user)
    page = client.get("/me/").content.decode()
    assert re.findall(r"<h1>(.*?)</h1>", page) == ["Meine Spiele"]
    assert mine.pk in {seat.game_id for seat in players.seats_of(player.email)}


def test_an_anonymous_page_follows_the_browser_and_its_switcher() -> None:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    page = client.get("/open/").content.decode()
    assert (page.splitlines()[1], re.findall(r"<h1>(.*?)</h1>", page)) == (
        '<html lang="en">',
        ["Open games"],
    )
    response = client.post("/i18n/setlang/", {"language": "de", "next": "/open/"})
    assert (response.status_code, response["Location"]) == (302, "/open/")
    assert client.cookies["django_language"].value == "de"
    page = client.get("/open/").content.decode()
    assert (page.splitlines()[1], re.findall(r"<h1>(.*?)</h1>", page)) == (
        '<html lang="de">',
        ["Offene Spiele"],
    )
    german = Client(HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9").get("/signin/").content.decode()
    assert re.findall(r"<h1>(.*?)</h1>", german) == ["Anmelden"]


def test_the_gm_panel_stays_english_for_a_german_browser() -> None:
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.force_login(GMFactory.create(is_staff=True))
    response = client.get("/gm/")
    assert (response.status_code, response["Content-Language"]) == (200, "en")
    assert response.content.decode().splitlines()[1] == '<html lang="en">'


def test_the_gm_sets_the_games_language_and_play_again_keeps_it(now: datetime) -> None:
    gm: User = GMFactory.create(is_staff=True)
    game = GameFactory.create(seats=2, gm=gm)
    client = Client()
    client.force_login(gm)
    response = client.post(f"/gm/{game.pk}/language/", {"language": "de"})
    assert response.status_code == 302
    assert Game.objects.get(pk=game.pk).language == "de"
    before = Game.objects.get(pk=game.pk).language
    client.post(f"/gm/{game.pk}/language/", {"language": "fr"})
    assert Game.objects.get(pk=game.pk).language == before


# --- dates and numbers ---------------------------------------------------------------------


def test_dates_and_numbers_are_written_in_the_languages_form() -> None:
    moment = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    with translation.override("de"):
        assert (
            local_time(moment, "Europe/Berlin") == "Mo., 23. November 2026, 19:00 CET (18:00 UTC)"
        )
        assert local_time(moment, "UTC") == "Mo., 23. November 2026, 18:00 UTC"
        assert absences.day(date(2026, 12, 1)) == "1. Dezember 2026"
        assert reliability.percent(3, 120) == "2,5 %"
    with translation.override("en"):
        assert local_time(moment, "Europe/Berlin") == "Mon 23 Nov 2026 19:00 CET (18:00 UTC)"
        assert absences.day(date(2026, 12, 1)) == "1 December 2026"
        assert reliability.percent(3, 120) == "2.5%"


# --- the catalogue's check ---------------------------------------------------------------------

PO = """# a tiny catalogue
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#: games/x.py
msgid "Dice"
msgstr "Würfel"

#: games/x.py
#, python-format
msgid "%(count)d die"
msgid_plural "%(count)d dice"
msgstr[0] "%(count)d Würfel"
msgstr[1] ""

#: games/x.py
msgid "Bid"
msgstr ""

#: games/x.py
#, fuzzy
msgid "Cup"
msgstr "Tasse"

#~ msgid "Gone"
#~ msgstr ""
"""


def test_the_check_names_every_untranslated_and_fuzzy_string() -> None:
    entries = catalogue.entries(PO)
    assert [entry.msgid for entry in entries] == ["Dice", "%(count)d die", "Bid", "Cup"]
    assert catalogue.problems(entries) == [
        "not translated: '%(count)d die'",
        "not translated: 'Bid'",
        "fuzzy (check the translation, then remove the flag): 'Cup'",
    ]
    extracted = catalogue.entries(PO.replace('msgid "Bid"', 'msgid "Bet"'))
    assert catalogue.out_of_step(entries, extracted) == [
        "not in the catalogue: 'Bet'",
        "no longer in the code: 'Bid'",
    ]


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext is not installed")
def test_the_check_finds_a_stale_compiled_catalogue(tmp_path: Path) -> None:
    po, mo = tmp_path / "django.po", tmp_path / "django.mo"
    po.write_text(PO, encoding="utf-8")
    catalogue.compile_po(po, mo)
    dice = polib.mofile(str(mo)).find("Dice")
    assert dice is not None and dice.msgstr == "Würfel"
    assert catalogue.stale_mo(po, mo) is False
    po.write_text(PO.replace('msgstr "Würfel"', 'msgstr "Würfelchen"'), encoding="utf-8")
    assert catalogue.stale_mo(po, mo) is True
