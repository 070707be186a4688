"""Rubrics: the versioned lists of criteria every review is judged against.

- `library`: the built-in rubrics (YAML data in `builtin/`), reading rubric files, pinning and
  resolving `extends`, the canonical export.
- `lint`: errors and warnings of a draft before it is saved.
- `diff`: what changed between two versions of a rubric document.
- `trials`: a rubric tried without a run, and its effect on past runs.
- `store`: stored versions' views and errors, and the rubric store protocol; `actions`: what a
  rubric author does (save a version, import a file, keep a trial) over it.
"""

from santa_core.rubrics.library import (
    RubricCompositionError,
    RubricFileError,
    builtin_names,
    export_document,
    load_builtin,
    load_rubric_file,
    parse_rubric,
    read_document,
)

__all__ = [
    "RubricCompositionError",
    "RubricFileError",
    "builtin_names",
    "export_document",
    "load_builtin",
    "load_rubric_file",
    "parse_rubric",
    "read_document",
]
