"""Django's PostgreSQL backend, with bulk inserts written as VALUES rows (see compiler)."""
