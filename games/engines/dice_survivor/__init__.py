"""Dice Survivor: the rules (``rules``) and what is derived from them."""
