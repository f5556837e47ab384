from django.urls import path

from games import gm_views

app_name = "gm"

urlpatterns = [
    path("", gm_views.dashboard, name="dashboard"),
    path("new/", gm_views.create, name="create"),
    path("<int:game_id>/", gm_views.game_page, name="game"),
    path("<int:game_id>/<slug:action>/", gm_views.act, name="act"),
    path(
        "<int:game_id>/emails/<int:email_id>/send-again/",
        gm_views.send_again,
        name="send_again",
    ),
]
