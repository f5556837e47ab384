from tests.esps import esp_api, esp_settings, on_turn  # noqa: F401 - fixtures for these tests
