from django.apps import AppConfig


class MailConfig(AppConfig):
    name = "moderator.mail"
    label = "mail"
    verbose_name = "Outgoing mail"

    def ready(self) -> None:
        from moderator.mail import (
            checks,  # noqa: F401 - registers the system checks
            tasks,  # noqa: F401 - registers the tasks queueing names
        )
