"""What the history says: the metrics' definitions and a run's verification record.

- `metrics`: every figure defined once (first-pass rate, iterations, taxonomy, agreement and
  Cohen's κ, escape rate, cost), from SQL aggregates to the report the page and the CLI print.
- `metrics_families`: agreement, κ and escape rate split by the panel's model-family pair.
- `record`: the verification record of a run and its JSON; `record_html` and `record_pdf` render it.
"""
