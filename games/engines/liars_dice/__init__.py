"""Liar's Dice (classic, Death Match, team): the rules (``rules``) and what is derived from them."""
