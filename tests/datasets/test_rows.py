"""Reading datasets: JSONL and CSV rows, ids, --map, and every kind of bad row as that row's error."""

from __future__ import annotations

import re

import pytest

from localjudge._datasets.rows import parse_mapping, read_json_lines, read_rows, read_text, row_of
from localjudge.errors import (
    DuplicateIdError,
    InvalidEncodingError,
    MalformedRowError,
    MissingDependencyError,
    MissingValueError,
    UsageError,
)


def outcomes(path, **options):
    return [(row.id, row.values if row.error is None else type(row.error)) for row in read_rows(path, **options)]


def test_jsonl_rows_take_their_id_or_line_number(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "a"}\n\n{"id": "x", "outputs": "b"}\n{"key": 7, "outputs": "c"}\n', encoding="utf-8")
    assert outcomes(data) == [("1", {"outputs": "a"}), ("x", {"outputs": "b"}), ("4", {"key": 7, "outputs": "c"})]
    assert outcomes(data, id_field="key")[2] == ("7", {"outputs": "c"})
    with pytest.raises(UsageError, match=r"no row of .* has 'kee', the id_field= given"):  # misspelt
        outcomes(data, id_field="kee")


def test_every_kind_of_bad_jsonl_line_is_its_rows_error_and_the_rest_read_on(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_bytes(
        b'{"id": "a", "outputs": "fine"}\n'
        b"not json\n"
        b'["an", "array"]\n'
        b'{"id": "b", "outputs": "caf\xe9"}\n'  # Latin-1, not UTF-8
        b'{"id": "a", "outputs": "again"}\n'
        b'{"id": "c", "outputs": "last"}\n'
    )
    found = list(read_rows(data))
    assert [(row.id, type(row.error)) for row in found] == [
        ("a", type(None)),
        ("2", MalformedRowError),
        ("3", MalformedRowError),
        ("4", InvalidEncodingError),
        ("a@data.jsonl:5", DuplicateIdError),
        ("c", type(None)),
    ]
    assert str(found[1].error).startswith("data.jsonl:2: is not valid JSON")
    assert "is a JSON list, not an object" in str(found[2].error)
    assert "repeats the id 'a' of data.jsonl:1" in str(found[4].error)


def test_a_row_nested_too_deep_is_that_rows_error(tmp_path):
    """990 levels once passed the parser and broke the whole run further on."""
    data = tmp_path / "data.jsonl"
    deep = '{"id": "deep", "outputs": ' + "[" * 990 + "]" * 990 + "}"
    data.write_text('{"id": "a", "outputs": "x"}\n' + deep + '\n{"id": "b", "outputs": "y"}\n', encoding="utf-8")
    found = list(read_rows(data))
    assert [(row.id, type(row.error)) for row in found] == [
        ("a", type(None)),
        ("2", MalformedRowError),
        ("b", type(None)),
    ]
    assert "nested more than 64 levels deep" in str(found[1].error)


def test_a_byte_order_mark_before_the_first_row_is_not_part_of_it(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_bytes('\ufeff{"id": "first", "outputs": "a"}\n{"id": "second", "outputs": "b"}\n'.encode())
    assert [(row.id, row.error) for row in read_rows(data)] == [("first", None), ("second", None)]


def test_csv_with_a_mapping_and_empty_cells(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text(
        "id,question,answer,note\nq1,2+2?,4,\nq2,,5,x\nq3,Sky?,,\nq4,a,b,c,extra\n",
        encoding="utf-8",
    )
    found = list(read_rows(data, mapping=parse_mapping("inputs=question, outputs=answer")))
    assert (found[0].id, found[0].values) == ("q1", {"inputs": "2+2?", "outputs": "4"})  # an empty cell is absent
    assert isinstance(found[1].error, MissingValueError) and "'question' cell is empty" in str(found[1].error)
    assert isinstance(found[2].error, MissingValueError) and "data.csv:4" in str(found[2].error)
    assert isinstance(found[3].error, MalformedRowError) and "more cells than the header" in str(found[3].error)


def test_a_mapped_column_that_is_missing_is_the_rows_error(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"q": "x", "a": "y"}\n{"q": "x"}\n', encoding="utf-8")
    found = list(read_rows(data, mapping={"inputs": "q", "outputs": "a"}))
    assert found[0].values == {"inputs": "x", "outputs": "y"}
    assert isinstance(found[1].error, MissingValueError) and "no column 'a'" in str(found[1].error)


def test_csv_bytes_that_are_not_utf8_are_that_rows_error(tmp_path):
    data = tmp_path / "data.csv"
    data.write_bytes(b"outputs\nfine\ncaf\xe9\nalso fine\n")
    assert outcomes(data) == [("1", {"outputs": "fine"}), ("2", InvalidEncodingError), ("3", {"outputs": "also fine"})]


@pytest.mark.parametrize(
    ("text", "message"), [("outputs", "VARIABLE=COLUMN"), ("a=b,a=c", "twice"), ("=b", "VARIABLE")]
)
def test_bad_mappings_are_usage_errors(text, message):
    with pytest.raises(UsageError, match=rf"^mapping .*{message}") as bad:
        parse_mapping(text)
    assert bad.value.render({"mapping": "--map"}).startswith("--map ")


def test_formats_come_from_the_suffix_or_are_named(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text('{"outputs": "a"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"name it with file_format= jsonl\|csv\|parquet") as unknown:
        list(read_rows(data))
    assert unknown.value.render({"file_format": "--format"}).endswith("name it with --format jsonl|csv|parquet")
    assert outcomes(data, file_format="jsonl") == [("1", {"outputs": "a"})]


def test_parquet_needs_pyarrow_or_reads_rows(tmp_path):
    data = tmp_path / "data.parquet"
    try:
        import pyarrow
        import pyarrow.parquet as parquet
    except ImportError:
        data.write_bytes(b"PAR1")
        with pytest.raises(MissingDependencyError, match="pyarrow"):
            list(read_rows(data))
        return
    parquet.write_table(pyarrow.table({"id": ["a", "b"], "outputs": ["4", "5"]}), data)
    assert outcomes(data) == [("a", {"outputs": "4"}), ("b", {"outputs": "5"})]


def test_small_files_name_the_bad_line_or_byte(tmp_path):
    shots = tmp_path / "shots.jsonl"
    shots.write_bytes(b'{"outputs": "a"}\n{"outputs": \xff}\n')
    with pytest.raises(InvalidEncodingError, match=r"shots\.jsonl:2"):
        read_json_lines(shots)
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"Judge {outputs}\nline two \xe9\n")
    with pytest.raises(InvalidEncodingError, match="line 2"):
        read_text(prompt)


def test_a_column_may_feed_two_variables_and_the_id_column_one(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "q", "text": "x", "other": 1}\n', encoding="utf-8")
    (row,) = read_rows(data, mapping={"inputs": "text", "outputs": "text", "context": "id"})
    assert (row.id, row.values) == ("q", {"other": 1, "inputs": "x", "outputs": "x", "context": "q"})


def test_a_bad_lines_number_is_an_id_no_later_row_may_take(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "1", "outputs": "a"}\nnot json\n{"id": "2", "outputs": "b"}\n', encoding="utf-8")
    assert [(row.id, type(row.error).__name__) for row in read_rows(data)] == [
        ("1", "NoneType"),
        ("2", "MalformedRowError"),
        ("2@data.jsonl:3", "DuplicateIdError"),
    ]


def test_half_a_surrogate_pair_is_not_text(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "\\ud83d alone"}\n', encoding="utf-8")
    (row,) = read_rows(data)
    assert isinstance(row.error, InvalidEncodingError)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('id,inputs,outputs\nc1,q,"4\nc2,q,5\nc3,q,6\n', 2),  # open to the end: three rows would become one
        ('id,inputs,outputs\nc1,q,4\nc2,q,"5\nc3,q,"6"\n', 3),  # closed by a later quote, mid-cell
        ('id,"inputs\n', 1),  # in the header
    ],
)
def test_a_quote_left_open_in_a_csv_is_a_file_error_naming_its_line(tmp_path, text, line):
    path = tmp_path / "u.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=rf"u\.csv:{line}: the CSV cannot be read past this line"):
        list(read_rows(path))


def test_a_quoted_cell_over_several_lines_is_still_one_cell_and_lines_are_counted(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text('id,outputs\nc1,"two\nlines"\nc2,"say ""hi"""\n', encoding="utf-8")
    rows = list(read_rows(path))
    assert [row.values["outputs"] for row in rows] == ["two\nlines", 'say "hi"']
    assert [row.where for row in rows] == ["m.csv:3", "m.csv:4"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("true", r"'id' is true \(a boolean\)"),
        ('["a"]', r"""'id' is \["a"\] \(a list\)"""),
        ('{"k": 1}', r"""'id' is \{"k": 1\} \(an object\)"""),
        ("1.5", r"'id' is 1.5 \(a number with a fraction\)"),
        ("1.0", r"'id' is 1.0 \(a number with a fraction\)"),
    ],
)
def test_an_id_neither_text_nor_a_whole_number_is_its_rows_error_naming_the_row(tmp_path, given, said):
    data = tmp_path / "data.jsonl"
    data.write_text(f'{{"id": "a", "outputs": "x"}}\n{{"id": {given}, "outputs": "y"}}\n', encoding="utf-8")
    first, second = read_rows(data)
    assert (first.id, first.error) == ("a", None)
    assert second.id == "2@data.jsonl:2" and isinstance(second.error, MalformedRowError)  # never "True" or "['a']"
    assert str(second.error).startswith("data.jsonl:2: ")
    assert re.search(said, str(second.error)) and "an id is text or a whole number" in str(second.error)


def test_whole_number_ids_are_their_digits_and_one_beside_the_text_one_is_named_with_both_rows(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": 1, "o": "x"}\n{"id": 20, "o": "y"}\n{"id": "1", "o": "z"}\n', encoding="utf-8")
    rows = list(read_rows(data))
    assert [(row.id, row.error) for row in rows[:2]] == [("1", None), ("20", None)]
    assert isinstance(rows[2].error, DuplicateIdError)
    assert str(rows[2].error) == (
        'data.jsonl:3: has the id "1", and data.jsonl:1 has 1: ids are compared as text, so these are the '
        "same id; give every row an id of its own"
    )


def test_a_null_id_numbers_the_row_as_a_missing_one_does(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "a", "o": "x"}\n{"id": null, "o": "y"}\n', encoding="utf-8")
    assert [(row.id, row.error) for row in read_rows(data)] == [("a", None), ("2", None)]


def test_an_integer_of_another_library_is_a_whole_number_id():
    """numpy's integers (a DataFrame's rows) are ids by their digits; a float is refused, never '2.0'."""
    numpy = pytest.importorskip("numpy")
    assert row_of({"id": numpy.int64(7), "o": "x"}, "id", 1).id == "7"
    assert row_of({"id": None, "o": "x"}, "id", 4).id == "4"
    assert isinstance(row_of({"id": numpy.float64(2.0), "o": "x"}, "id", 2).error, MalformedRowError)
    assert isinstance(row_of({"id": numpy.bool_(True), "o": "x"}, "id", 3).error, MalformedRowError)


def test_a_row_given_as_a_dict_takes_the_same_ids():
    assert (row_of({"id": 7, "o": "x"}, "id", 1).id, row_of({"o": "x"}, "id", 3).id) == ("7", "3")
    refused = row_of({"id": True, "o": "x"}, "id", 2)
    assert refused.id == "2@row 2" and re.search(r"^row 2: its 'id' is true \(a boolean\)", str(refused.error))


def test_a_refused_id_takes_no_id_a_later_row_has(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": true, "o": "x"}\n{"id": 1, "o": "y"}\n', encoding="utf-8")
    assert [(row.id, type(row.error).__name__) for row in read_rows(data)] == [
        ("1@data.jsonl:1", "MalformedRowError"),
        ("1", "NoneType"),
    ]
