"""Code exercises: the catalogue, submissions and their grading, hints, solutions, re-solving,
authors' figures and timed coding rounds."""
