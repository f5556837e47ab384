

app_name = "gm"

urlpatterns: list = []
