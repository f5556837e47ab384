from tests.esps import esp_api, esp_settings  # noqa: F401 - fixtures for these tests
