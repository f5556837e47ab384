from django.urls import path

from games.web.me import tokens, views

app_name = "players"

urlpatterns = [
    path("signin/", views.signin, name="signin"),
    # Before the link's pattern: "code" is no token (a token is 43 characters).
    path("signin/code/", views.signin_code, name="code"),
    path("signin/<str:token>/", views.signin_link, name="link"),
    path("signout/", views.signout, name="signout"),
    path("me/", views.me, name="me"),
    path("me/settings/", views.me_settings, name="settings"),
    path("me/away/", views.me_away, name="away"),
    path("me/tokens/", tokens.my_tokens, name="tokens"),
    path("me/tokens/<int:token_id>/revoke/", tokens.revoke_token, name="revoke_token"),
]
