from ragreview.cli import cli

cli()
