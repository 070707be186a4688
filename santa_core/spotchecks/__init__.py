"""Spot-checks: a seeded random share of shipped runs, judged blind by a person, so misses are counted, not hoped
about. Pure: the draw (`draw`), rules and spot-check records (`model`), the blind form's rules (`form`), the store
protocol (`store`) and the one door for a person's writes (`actions`)."""
