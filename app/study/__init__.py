"""Studying questions: quizzes against the clock, spaced review with FSRS, open-answer practice."""
