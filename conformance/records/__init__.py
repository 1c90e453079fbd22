"""The records: failures and their histories, run records and coverage, text rendering, traces. What reports read; they import nothing of the runner."""
