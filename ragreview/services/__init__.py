"""The outside world (NLTK, LLM endpoints), each imported lazily by its own module.

Nothing is imported here, so ``import ragreview.services`` stays cheap.
"""
