"""The outside world, imported lazily: reports, sentencizer, judge."""
