from django.urls import path

from games.web.public import standings as standing_views

app_name = "standings"

urlpatterns = [
    path("players/<slug:public_id>/", standing_views.player, name="player"),
    path("rankings/", standing_views.rankings, name="rankings"),
    path("rankings/<slug:engine>/", standing_views.ranking, name="ranking"),
]
