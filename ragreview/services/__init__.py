"""The outside world, imported lazily: sentencizer (nltk), judge (openai)."""
