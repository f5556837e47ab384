from django.apps import AppConfig


class MailConfig(AppConfig):
    name = "moderator.mail"
    label = "mail"
    verbose_name = "Outgoing mail"

    def ready(self) -> None:
        from moderator.mail import (
            charsets,
            checks,  # noqa: F401 - registers the system checks
            tasks,  # noqa: F401 - registers the tasks queueing names
        )

        # Charsets mail programs name that Python does not know (iso-8859-8-i, ...).
        charsets.register()
