from django.urls import path

from games.web.public import standings

app_name = "standings"

urlpatterns = [
    path("players/<slug:public_id>/", standings.player, name="player"),
    path("rankings/", standings.rankings, name="rankings"),
    path("rankings/<slug:engine>/", standings.ranking, name="ranking"),
]
