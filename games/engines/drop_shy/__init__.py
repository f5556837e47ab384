"""Drop-Shy: the rules (``rules``) and what is derived from them."""
