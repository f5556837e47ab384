from django.urls import path

from games.web.gm import inbound as inbound_views
from games.web.gm import views as gm_views
from games.web.play import press as press_views

app_name = "gm"

urlpatterns = [
    path("", gm_views.dashboard, name="dashboard"),
    path("new/", gm_views.create, name="create"),
    path("import/", gm_views.create_from_paper, name="create_from_paper"),
    path("new/from/<int:template_id>/", gm_views.create_from, name="create_from"),
    path("new/<slug:game>/", gm_views.create_game, name="create_game"),
    path("new/<slug:game>/<slug:profile>/", gm_views.create_game, name="create_profile"),
    path("templates/<int:template_id>/delete/", gm_views.delete_template, name="delete_template"),
    path("zine/", gm_views.all_zines, name="zines"),
    path("<int:game_id>/", gm_views.game_page, name="game"),
    path("<int:game_id>/zine/", gm_views.game_zine, name="zine"),
    path("<int:game_id>/messages/", press_views.gm_messages, name="messages"),
    path(
        "<int:game_id>/messages/<int:message_id>/hide/",
        press_views.gm_hide,
        name="hide_message",
    ),
    path("<int:game_id>/inbound/", inbound_views.gm_inbound, name="inbound"),
    path(
        "<int:game_id>/inbound/<int:inbound_id>/<slug:action>/",
        inbound_views.gm_inbound_act,
        name="inbound_act",
    ),
    path("<int:game_id>/<slug:action>/", gm_views.act, name="act"),
    path(
        "<int:game_id>/emails/send-unknown-again/",
        gm_views.send_unknown_again,
        name="send_unknown_again",
    ),
    path(
        "<int:game_id>/emails/<int:email_id>/send-again/",
        gm_views.send_again,
        name="send_again",
    ),
]
