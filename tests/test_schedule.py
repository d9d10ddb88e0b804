"""The order in which scripts/test.sh's workers take the units of work (tests/conftest.py): the long ones of FIRST
first, the solution notebooks before the book's test (which shows the outputs of their nbval run), then the others
with the most tests first; the files of GRADE_SHARERS make one unit, and a unit's tests keep their order."""

from types import SimpleNamespace

from tests import conftest
from tests.conftest import ROOT


def _ordered(nodeids):
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    conftest.pytest_collection_modifyitems(None, None, items)
    return [item.nodeid for item in items]


def test_every_unit_named_first_exists():
    for unit in conftest.FIRST:
        assert unit == "*.ipynb" or (ROOT / unit).is_file(), unit


def test_the_long_units_come_first_the_notebooks_before_the_book_then_the_most_tests():
    collected = ["tests/test_a.py::one", "tests/test_book.py::site", "tests/test_b.py::one", "tests/test_b.py::two",
                 "tests/test_snapshot.py::one", "solutions/01_sinusoidal.ipynb::Cell 0",
                 "solutions/01_sinusoidal.ipynb::Cell 1", "tests/test_c.py::one", "tests/test_examples.py::one",
                 "solutions/07_train_short_test_long.ipynb::Cell 0", "tests/test_book.py::search"]
    assert _ordered(collected) == [
        "solutions/07_train_short_test_long.ipynb::Cell 0",
        "solutions/01_sinusoidal.ipynb::Cell 0", "solutions/01_sinusoidal.ipynb::Cell 1",
        "tests/test_book.py::site", "tests/test_book.py::search",
        # two tests each: in the order first collected
        "tests/test_b.py::one", "tests/test_b.py::two",
        "tests/test_snapshot.py::one", "tests/test_examples.py::one",  # GRADE_SHARERS: one unit, kept together
        "tests/test_a.py::one", "tests/test_c.py::one"]
    assert conftest.FIRST.index("*.ipynb") < conftest.FIRST.index("tests/test_book.py")
