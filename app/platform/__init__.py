"""Rules every feature shares: whose data a request touches (learners) and rate limits."""
