from django.urls import path

from games.web.public import signups as signup_views

app_name = "signups"

urlpatterns = [
    path("", signup_views.open_list, name="list"),
    path("confirm/<str:token>/", signup_views.confirm, name="confirm"),
    path("<slug:public_id>/", signup_views.game_page, name="game"),
]
