"""The First Player (game nights): the rules (``rules``) and what is derived from them."""
