from django.urls import path

from games.web.api import gm, seats, stream  # noqa: F401 - stream's operation joins seats' router
from games.web.api.base import api

api.add_router("", seats.router)
api.add_router("", gm.router)

urlpatterns = [path("api/v1/", api.urls)]
