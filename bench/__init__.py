"""The bench scripts (docs/architecture.md): run each as ``python bench/NAME.py``; tests
import a few of their generators as ``bench.NAME``."""
