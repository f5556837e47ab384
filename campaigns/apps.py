from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"

    def ready(self) -> None:
        from campaigns import postal
        from games.lib.signals import game_finished

        game_finished.connect(postal.on_game_finished, dispatch_uid="campaigns.game_finished")
