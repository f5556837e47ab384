from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from anymail.signals import inbound, tracking
        from django.db.backends.signals import connection_created

        from games import replies
        from moderator.db.arrays import binary_arrays

        inbound.connect(replies.on_inbound, dispatch_uid="games.replies.inbound")
        tracking.connect(replies.on_tracking, dispatch_uid="games.replies.tracking")
        # The step's rows are bulk-inserted as arrays: binary ones (moderator/db/arrays.py).
        connection_created.connect(binary_arrays, dispatch_uid="moderator.db.binary_arrays")
