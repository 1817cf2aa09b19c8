from ragreview.cli import cli

if __name__ == "__main__":  # not when a worker process (spawn) imports it
    cli()
