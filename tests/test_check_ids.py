"""Check ids are explicit, unique and locked: an id never disappears or changes meaning."""

import dataclasses

import pytest

from grader import check_ids
from grader.checks import CHAPTERS, CheckRegistryError, all_checks, chapter_checks
from grader.spec import ID, Check


def test_every_check_has_a_readable_id_and_a_unique_key():
    checks = all_checks()
    assert all(ID.match(c.id) for c in checks)
    assert len({c.key for c in checks}) == len(checks)
    assert all(c.key == f"{c.exercise}.{c.id}" for c in checks)


def test_the_committed_lock_holds_every_key_with_its_meaning():
    assert check_ids.problems(all_checks(), check_ids.load()) == []


def test_keys_do_not_depend_on_the_order_of_the_checks():
    for chapter in CHAPTERS:
        checks = chapter_checks(chapter)
        assert [c.key for c in reversed(checks)] == [c.key for c in checks][::-1]


def _check(**changes):
    base = Check("f", "a check", "call", {"args": [1]}, id="one")
    return dataclasses.replace(base, **changes)


def test_the_lock_refuses_a_key_that_disappears_or_changes_meaning_and_reports_new_keys():
    lock = check_ids.updated([_check(), _check(id="two")], {})
    assert check_ids.problems([_check(), _check(id="two")], lock) == []
    # renaming the words or the points keeps the meaning
    assert check_ids.problems([_check(name="other words", points=3), _check(id="two")], lock) == []
    gone = check_ids.problems([_check()], lock)
    assert len(gone) == 1 and "f.two disappeared" in gone[0]
    changed = check_ids.problems([_check(params={"args": [2]}), _check(id="two")], lock)
    assert len(changed) == 1 and "f.one changed meaning" in changed[0]
    new = check_ids.problems([_check(), _check(id="two"), _check(id="three")], lock)
    assert new == ["f.three is not in the lock yet: run `python -m grader build`"]
    # a retired key may be missing, and may not come back
    lock["f.two"]["retired"] = True
    assert check_ids.problems([_check()], lock) == []
    assert "retired" in check_ids.problems([_check(), _check(id="two")], lock)[0]
    # updating adds new keys and never rewrites an existing entry
    assert check_ids.updated([_check(params={"args": [9]})], lock)["f.one"] == lock["f.one"]


def test_a_check_without_an_id_is_refused(monkeypatch):
    monkeypatch.setitem(CHAPTERS, "ch99", [Check("f", "no id", "call")])
    chapter_checks.cache_clear()
    try:
        with pytest.raises(CheckRegistryError, match="no valid id"):
            chapter_checks("ch99")
    finally:
        chapter_checks.cache_clear()


def test_the_build_knows_what_every_exercise_must_have(tmp_path):
    from grader import authoring

    assert authoring.problems() == []
    chapter = tmp_path / "09_new" / "chapter.py"
    chapter.parent.mkdir()
    chapter.write_text('# %%\ndef brand_new(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n')
    missing = {what.split(" ")[1] for exercise, what in authoring.problems([chapter]) if exercise == "brand_new"}
    # an example, written the way practitioners write it, is welcome but optional: a fourth file (issue 26)
    assert missing == {"checks", "main", "self-check", "conventions", "hint"}
