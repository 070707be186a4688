"""The Santa Method in pure Python: make a list, check it twice; if it's naughty, fix it until it's nice.

Grouped by concept, each package naming its public surface in its `__init__`:
`run` (engine, runner, gate, fixer, actions, the store protocols), `reviewers`, `checks`,
`rubrics`, `batch`, `reports`; beside them `models`, `text`, `roles`, `people`, `pricing` and
`config`. Nothing here imports `storage`, `streamlit`, `ui` or the composition root (`desk`).
"""
