from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from anymail.signals import inbound, tracking
        from django.db.backends.signals import connection_created

        from games import tasks  # noqa: F401 - registers the task webhooks.enqueue publishes by name
        from games.community import ratings, signups
        from games.lib.signals import civil_disorder, game_finished
        from games.notify import replies
        from moderator.db.arrays import binary_arrays
        from moderator.mail import inbound as mail_inbound

        inbound.connect(replies.on_inbound, dispatch_uid="games.notify.replies.inbound")
        mail_inbound.recipient_found.connect(
            replies.on_recipient, dispatch_uid="games.notify.replies.recipient"
        )
        mail_inbound.refused.connect(
            replies.on_refused, dispatch_uid="games.notify.replies.refused"
        )
        tracking.connect(replies.on_tracking, dispatch_uid="games.notify.replies.tracking")
        # A rated game counts in its game's ratings in the transaction that finishes it.
        game_finished.connect(
            ratings.on_game_finished, dispatch_uid="games.community.ratings.game_finished"
        )
        # A first-come game's reserves: a seat in civil disorder goes to the first, in the
        # resolution's transaction; those left waiting hear that the game ended.
        civil_disorder.connect(
            signups.on_civil_disorder, dispatch_uid="games.community.signups.civil_disorder"
        )
        game_finished.connect(
            signups.on_game_finished, dispatch_uid="games.community.signups.game_finished"
        )
        # The step's rows are bulk-inserted as arrays: binary ones (moderator/db/arrays.py).
        connection_created.connect(binary_arrays, dispatch_uid="moderator.db.binary_arrays")
