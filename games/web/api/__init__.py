"""The API under ``/api/v1/`` (docs/api.md), built with django-ninja: its OpenAPI document
comes from the views' types, its page (Swagger UI, served from the package's own files) at
``/api/v1/docs``. ``base`` holds the API, its tokens' check and its errors; ``seats`` what
a player's token reads and plays; ``gm`` a GM's games and actions. Every call asks the
same domain functions the pages ask: nothing of the game is written twice."""
