"""`ragreview judge`: label records with any OpenAI-compatible model (README.md, Running the judge).

Importing this package does not import openai; the client is created on first use.
"""

from .client import JudgeAbort, JudgeConfig, Stats
from .runner import rejudge_record, run

__all__ = ["JudgeAbort", "JudgeConfig", "Stats", "rejudge_record", "run"]
