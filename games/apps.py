from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from anymail.signals import inbound, tracking

        from games import replies

        inbound.connect(replies.on_inbound, dispatch_uid="games.replies.inbound")
        tracking.connect(replies.on_tracking, dispatch_uid="games.replies.tracking")
