from __future__ import annotations

from django.urls import URLPattern, path

from moderator.mail import views

app_name = "mail"

urlpatterns: list[URLPattern] = [
    path("", views.mailbox, name="mailbox"),
    path("files/<str:name>/<int:index>/", views.file_message, name="file"),
    path("outbox/<int:pk>/", views.row_message, name="row"),
]
