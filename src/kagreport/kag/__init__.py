"""Reading what ``kag benchmark`` writes: the datasets file, result files, the result tree.

This layer reads and validates; it grades nothing (see :mod:`kagreport.grading`).
"""

from __future__ import annotations

from kagreport.kag._datasets import MCQ, Datasets, Question, load_datasets, parse_datasets
from kagreport.kag._jsonfmt import dumps_pretty, format_float
from kagreport.kag._names import is_component_name, to_component_name
from kagreport.kag._records import (
    ResultRecord,
    RetrievalSample,
    decode_result,
    read_bytes,
    read_result,
)
from kagreport.kag._simulate import (
    SIMULATED_MARKER,
    SimulatedRun,
    SimulatedSetup,
    is_simulated,
    simulate_run,
    write_simulated_run,
)
from kagreport.kag._tree import LocalTree, RemoteTree, ResultTree, is_url, open_tree
from kagreport.kag._walk import (
    QuestionDir,
    ResultFile,
    check_root,
    iter_find_candidates,
    iter_find_entries,
    iter_question_dirs,
    iter_result_files,
    setup_name,
)

__all__ = [
    "MCQ",
    "SIMULATED_MARKER",
    "Datasets",
    "LocalTree",
    "Question",
    "QuestionDir",
    "RemoteTree",
    "ResultFile",
    "ResultRecord",
    "ResultTree",
    "RetrievalSample",
    "SimulatedRun",
    "SimulatedSetup",
    "check_root",
    "decode_result",
    "dumps_pretty",
    "format_float",
    "is_component_name",
    "is_simulated",
    "is_url",
    "iter_find_candidates",
    "iter_find_entries",
    "iter_question_dirs",
    "iter_result_files",
    "load_datasets",
    "open_tree",
    "parse_datasets",
    "read_bytes",
    "read_result",
    "setup_name",
    "simulate_run",
    "to_component_name",
    "write_simulated_run",
]
