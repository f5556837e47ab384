from django.urls import path

# stream's and conditionals' operations join the seats' router when imported.
from games.web.api import conditionals, gm, seats, stream  # noqa: F401
from games.web.api.base import api

api.add_router("", seats.router)
api.add_router("", gm.router)

urlpatterns = [path("api/v1/", api.urls)]
