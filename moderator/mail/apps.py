from django.apps import AppConfig


class MailConfig(AppConfig):
    name = "moderator.mail"
    label = "mail"
    verbose_name = "Outgoing mail"
