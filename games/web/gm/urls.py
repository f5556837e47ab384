from django.urls import path

from games.web.gm import actions, game, games, inbound, mail, press, resolve, signin, tokens, zines

app_name = "gm"

urlpatterns = [
    path("", games.dashboard, name="dashboard"),
    path("sign-in/", signin.SignIn.as_view(), name="sign_in"),
    path("sign-out/", signin.SignOut.as_view(), name="sign_out"),
    path("new/", games.create, name="create"),
    path("import/", games.create_from_paper, name="create_from_paper"),
    path("new/from/<int:template_id>/", games.create_from, name="create_from"),
    path("new/<slug:game>/", games.create_game, name="create_game"),
    path("new/<slug:game>/<slug:profile>/", games.create_game, name="create_profile"),
    path("templates/<int:template_id>/delete/", games.delete_template, name="delete_template"),
    path("zine/", zines.all_zines, name="zines"),
    path("tokens/", tokens.gm_tokens, name="tokens"),
    path("tokens/<int:token_id>/revoke/", tokens.revoke_gm_token, name="revoke_token"),
    path("<int:game_id>/", game.game_page, name="game"),
    path("<int:game_id>/zine/", zines.game_zine, name="zine"),
    path("<int:game_id>/edit/", games.edit_game, name="edit"),
    path("<int:game_id>/resolve/confirm/", resolve.confirm_resolve, name="resolve"),
    path("<int:game_id>/delete/", games.delete_game, name="delete"),
    path("<int:game_id>/messages/", press.gm_messages, name="messages"),
    path(
        "<int:game_id>/messages/<int:message_id>/hide/",
        press.gm_hide,
        name="hide_message",
    ),
    path("<int:game_id>/inbound/", inbound.gm_inbound, name="inbound"),
    path(
        "<int:game_id>/inbound/<int:inbound_id>/<slug:action>/",
        inbound.gm_inbound_act,
        name="inbound_act",
    ),
    path("<int:game_id>/<slug:action>/", actions.act, name="act"),
    path(
        "<int:game_id>/emails/send-unknown-again/",
        mail.send_unknown_again,
        name="send_unknown_again",
    ),
    path(
        "<int:game_id>/emails/<int:email_id>/send-again/",
        mail.send_again,
        name="send_again",
    ),
]
