from django.urls import path

from games.web.play import press as press_views
from games.web.play import views
from games.web.public import spectators as spectator_views

app_name = "games"

urlpatterns = [
    path("", views.home, name="home"),
    path("games/archive/", spectator_views.archive_index, name="archive_index"),
    path("games/archive/<slug:engine>/", spectator_views.archive, name="archive"),
    path("games/<slug:public_id>/", spectator_views.game_page, name="public"),
    path("games/<slug:public_id>/replay/", spectator_views.replay, name="replay"),
    path("games/<int:game_id>/verify/", views.verify_by_number, name="verify_by_number"),
    path("games/<slug:public_id>/verify/", views.verify, name="verify"),
    path("p/<str:token>/", views.magic_link, name="link"),
    path("play/", views.play_index, name="play_index"),
    path("play/<int:game_id>/", views.play_game, name="play"),
    path("play/<int:game_id>/view.json", views.play_game_json, name="play_json"),
    path("play/<int:game_id>/<int:position>/", views.play, name="seat"),
    path("play/<int:game_id>/<int:position>/view.json", views.play_json, name="seat_json"),
    path("play/<int:game_id>/<int:position>/email/", views.email_choice, name="email_choice"),
    path(
        "play/<int:game_id>/<int:position>/autopilot/",
        views.autopilot_choice,
        name="autopilot",
    ),
    path("play/<int:game_id>/<int:position>/away/", views.away, name="away"),
    path(
        "play/<int:game_id>/<int:position>/messages/",
        press_views.seat_messages,
        name="messages",
    ),
    path(
        "play/<int:game_id>/<int:position>/messages/email/",
        press_views.press_email,
        name="press_email",
    ),
    path("play/<int:game_id>/<int:position>/language/", views.language_choice, name="language"),
    path("play/<int:game_id>/<int:position>/extension/", views.extension, name="extension"),
    path("play/reminders/", views.reminder_choice, name="reminders"),
    path("email/stop/<str:what>/<str:token>/", views.stop_email, name="stop_email"),
    path("calendar/gm/<str:token>.ics", views.gm_calendar, name="gm_calendar"),
    path("calendar/<str:token>.ics", views.seat_calendar, name="calendar"),
]
