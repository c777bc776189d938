"""Business rules as plain typed functions: session first, keyword-only arguments."""
