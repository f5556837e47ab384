from django.urls import path

from games.web.me import views as player_views

app_name = "players"

urlpatterns = [
    path("signin/", player_views.signin, name="signin"),
    # Before the link's pattern: "code" is no token (a token is 43 characters).
    path("signin/code/", player_views.signin_code, name="code"),
    path("signin/<str:token>/", player_views.signin_link, name="link"),
    path("signout/", player_views.signout, name="signout"),
    path("me/", player_views.me, name="me"),
    path("me/settings/", player_views.me_settings, name="settings"),
    path("me/away/", player_views.me_away, name="away"),
]
