"""Choice and its Suppenkasper variant: the rules (``rules``) and what is derived from them."""
