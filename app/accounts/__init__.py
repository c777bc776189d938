"""Accounts: sign-up, sign-in, sessions and tokens, recovery codes, a guest carried into an
account, and the export of everything kept."""
