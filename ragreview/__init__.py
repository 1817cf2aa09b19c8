"""ragreview: see and fix the labels behind LLM-judged RAG evaluations."""

__version__ = "0.1.0"
