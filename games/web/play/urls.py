from django.urls import path

from games.web.play import (
    calendar,
    choices,
    conditionals,
    glossary,
    links,
    press,
    push,
    seat,
    settings,
    stream,
)
from games.web.public import privacy, spectators, verify

app_name = "games"

urlpatterns = [
    path("", links.home, name="home"),
    path("games/live/", spectators.live, name="live"),
    path("games/archive/", spectators.archive_index, name="archive_index"),
    path("games/archive/<slug:engine>/", spectators.archive, name="archive"),
    path("games/<slug:public_id>/", spectators.game_page, name="public"),
    path("games/<slug:public_id>/replay/", spectators.replay, name="replay"),
    path("games/<int:game_id>/verify/", verify.verify_by_number, name="verify_by_number"),
    path("games/<slug:public_id>/verify/", verify.verify, name="verify"),
    path("p/<str:token>/", links.magic_link, name="link"),
    path("play/", links.play_index, name="play_index"),
    path("play/<int:game_id>/", links.play_game, name="play"),
    path("play/<int:game_id>/view.json", links.play_game_json, name="play_json"),
    path("play/<int:game_id>/<int:position>/", seat.play, name="seat"),
    path("play/<int:game_id>/<int:position>/view.json", seat.play_json, name="seat_json"),
    path("play/<int:game_id>/<int:position>/stream", stream.seat_stream, name="seat_stream"),
    path(
        "play/<int:game_id>/<int:position>/settings/",
        settings.seat_settings,
        name="seat_settings",
    ),
    path("glossary/", glossary.glossary, name="glossary"),
    path("privacy/", privacy.privacy, name="privacy"),
    path("sw.js", push.service_worker, name="service_worker"),
    path("play/<int:game_id>/<int:position>/push/on/", push.subscribe, name="push_on"),
    path("play/<int:game_id>/<int:position>/push/off/", push.unsubscribe, name="push_off"),
    path("play/<int:game_id>/<int:position>/push/test/", push.test, name="push_test"),
    path("play/<int:game_id>/<int:position>/email/test/", push.test_email, name="email_test"),
    path("play/<int:game_id>/<int:position>/webhook/", push.player_webhook, name="player_webhook"),
    path("play/<int:game_id>/<int:position>/email/", choices.email_choice, name="email_choice"),
    path(
        "play/<int:game_id>/<int:position>/autopilot/",
        choices.autopilot_choice,
        name="autopilot",
    ),
    path("play/<int:game_id>/<int:position>/away/", choices.away, name="away"),
    path(
        "play/<int:game_id>/<int:position>/conditional/",
        conditionals.leave,
        name="conditional",
    ),
    path(
        "play/<int:game_id>/<int:position>/conditional/<int:conditional_id>/withdraw/",
        conditionals.withdraw,
        name="conditional_withdraw",
    ),
    path("play/<int:game_id>/<int:position>/messages/", press.seat_messages, name="messages"),
    path(
        "play/<int:game_id>/<int:position>/messages/email/",
        press.press_email,
        name="press_email",
    ),
    path("play/<int:game_id>/<int:position>/language/", choices.language_choice, name="language"),
    path("play/<int:game_id>/<int:position>/extension/", choices.extension, name="extension"),
    path("play/reminders/", choices.reminder_choice, name="reminders"),
    path("play/quiet/", choices.quiet_hours, name="quiet_hours"),
    path("play/<int:game_id>/<int:position>/ladder/", choices.ladder_choice, name="ladder"),
    path("email/stop/<str:what>/<str:token>/", choices.stop_email, name="stop_email"),
    path("calendar/gm/<str:token>.ics", calendar.gm_calendar, name="gm_calendar"),
    path("calendar/<str:token>.ics", calendar.seat_calendar, name="calendar"),
]
