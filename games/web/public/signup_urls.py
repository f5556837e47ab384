from django.urls import path

from games.web.public import signups

app_name = "signups"

urlpatterns = [
    path("", signups.open_list, name="list"),
    path("confirm/<str:token>/", signups.confirm, name="confirm"),
    path("<slug:public_id>/", signups.game_page, name="game"),
]
