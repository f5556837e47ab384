"""Campaigns carry players and dice across games and game nights (a later issue)."""
