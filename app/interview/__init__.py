"""Interview preparation across features: mock interviews (prompts and a coding round), readiness
for a date, the review queue of questions and exercises together."""
