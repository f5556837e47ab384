from django.urls import path

from campaigns.web import views

app_name = "campaigns"

urlpatterns = [
    path("", views.campaign_list, name="list"),
    path("new/first-player/", views.new_campaign, name="new_first_player"),
    path("new/league/<slug:game>/", views.new_campaign, name="new_league"),
    path("new/league/<slug:game>/<slug:profile>/", views.new_campaign, name="new_league_profile"),
    path("<int:campaign_id>/", views.campaign_page, name="campaign"),
    path("<int:campaign_id>/members/", views.add_member, name="add_member"),
    path("<int:campaign_id>/webhook/", views.campaign_webhook, name="webhook"),
    path("<int:campaign_id>/nights/", views.open_night, name="open_night"),
    path("<int:campaign_id>/games/", views.league_game, name="league_game"),
    path("<int:campaign_id>/tracker.csv", views.tracker_csv, name="tracker_csv"),
    path("<int:campaign_id>/tracker.svg", views.tracker_svg, name="tracker_svg"),
]
