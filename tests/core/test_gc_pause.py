"""``skip_final_collection``: the process still ends with all its output and exit code."""

import subprocess
import sys
import textwrap


def test_a_process_that_skips_the_final_collection_ends_with_all_its_output() -> None:
    """Registered twice, with a cycle holding a finalizer and half a megabyte written
    to stdout: the exit code is the process's and every byte arrives."""
    code = textwrap.dedent(
        """
        import sys
        from ragreview.core.gc_pause import skip_final_collection

        class Cycle:
            def __init__(self):
                self.me = self

        skip_final_collection()
        skip_final_collection()
        keep = [Cycle() for _ in range(1000)]
        sys.stdout.write("x" * 500_000)
        sys.exit(3)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stdout == "x" * 500_000
    assert done.stderr == ""
