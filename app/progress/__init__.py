"""A learner's progress on items: visits, bookmarks, notes, recall checks, runs and drafts, and the
status derived from them."""
