"""Guess the Die: a tiny game that lives in the tests, added through the steps of
docs/adding-a-game.md (its rules in ``rules``, its order form in ``form``, its templates in
``templates/games/guess/``) and registered only for the tests that play it."""
