"""ktrace export: a replay database as a hive-partitioned Parquet directory."""

from __future__ import annotations

import click

from ktrace.databases import db_option, open_for_analysis


@click.command(short_help="Export the database as Parquet partitioned by kind and date.")
@db_option
@click.option("--parquet", "directory", required=True, type=click.Path(file_okay=False),
              help="Write here (a new directory): DIR/<table>/kind=…/date=…/*.parquet.")
def export(db_path: str, directory: str) -> None:
    """Export the database as Parquet, partitioned by kind and date, for object storage;
    every analysis reads it in place with --parquet DIR.

    Examples:

    \b
      ktrace export --db incident.duckdb --parquet incident-parquet
      ktrace stuck --parquet incident-parquet"""
    from replayer.export import export_parquet

    con = open_for_analysis(db_path)
    try:
        written = export_parquet(con, directory)
    finally:
        con.close()
    click.echo(f"exported {sum(written.values()):,} rows of {len(written)} tables to "
               f"{directory} ({written.get('raw_events', 0):,} records)", err=True)
