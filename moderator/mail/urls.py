

app_name = "mail"

urlpatterns: list = []
