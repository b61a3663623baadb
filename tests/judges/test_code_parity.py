"""An import swap from OpenEvals' code judge: the same messages, results and exceptions as the real package."""

from __future__ import annotations

import copy
import inspect
import itertools
import json

import pytest
from pydantic import Field

openevals_code = pytest.importorskip("openevals.code.llm")
openevals_code_base = pytest.importorskip("openevals.code.base")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

from localjudge import create_async_code_llm_as_judge, create_code_llm_as_judge  # noqa: E402
from localjudge._judges import code as our_code  # noqa: E402
from localjudge._prompts.code import markdown_code  # noqa: E402
from localjudge.testing import ScriptedClient  # noqa: E402

THEIR_PROMPT = openevals_code.CODE_CORRECTNESS_PROMPT
THEIR_REFERENCE_PROMPT = openevals_code.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS
VERDICT = json.dumps({"reasoning": "It works.", "score": True})
ANSWER = "Here is the function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nRun it with:\n```bash\npython add.py\n```\n"

OUTPUTS = {
    "a string": ANSWER,
    "a message dict": {"role": "assistant", "content": ANSWER},
    "an agent's messages": {"messages": [HumanMessage(content="add?"), AIMessage(content=ANSWER)]},
    "text content blocks": {"messages": [{"role": "assistant", "content": [{"type": "text", "text": ANSWER}]}]},
}
OPTIONS = {
    "the default": {"prompt": THEIR_PROMPT},
    "markdown blocks": {"prompt": THEIR_PROMPT, "code_extraction_strategy": "markdown_code_blocks"},
    "a code extractor": {"prompt": THEIR_PROMPT, "code_extractor": lambda outputs: "print(1)"},
    "a reference, a system, few-shot": {
        "prompt": THEIR_REFERENCE_PROMPT,
        "system": "Be strict.",
        "few_shot_examples": [{"inputs": "sum?", "outputs": "sum", "reasoning": "Right.", "score": True}],
        "code_extraction_strategy": "markdown_code_blocks",
    },
    "continuous without reasoning": {"prompt": THEIR_PROMPT, "continuous": True, "use_reasoning": False},
}
CALL = {"inputs": "Write add(a, b).", "reference_outputs": "def add(a, b): return a + b"}


def _answer(options: dict) -> str:
    if options.get("use_reasoning", True):
        return VERDICT
    return json.dumps({"score": 0.75 if options.get("continuous") else True})


def _both(
    options: dict, outputs: object, answer: str, **call: object
) -> tuple[ScriptedClient, dict, ScriptedClient, dict]:
    """OpenEvals' evaluator and ours, each with its own scripted judge and its own copy of the call."""
    theirs, ours = ScriptedClient([answer]), ScriptedClient([answer])
    expected = openevals_code.create_code_llm_as_judge(**options, judge=theirs, model="judge")(
        outputs=copy.deepcopy(outputs), **copy.deepcopy(call)
    )
    found = create_code_llm_as_judge(**options, judge=ours, model="judge")(
        outputs=copy.deepcopy(outputs), **copy.deepcopy(call)
    )
    return theirs, expected, ours, found


@pytest.mark.parametrize(("case", "shape"), list(itertools.product(OPTIONS, OUTPUTS)))
def test_the_same_arguments_send_the_same_messages_and_give_the_same_result(case, shape):
    options = OPTIONS[case]
    theirs, expected, ours, found = _both(options, OUTPUTS[shape], _answer(options), **CALL)
    [sent], [asked] = ours.requests, theirs.requests
    assert sent["messages"] == asked["messages"]  # byte for byte
    assert sent["response_format"]["json_schema"]["schema"] == asked["response_format"]["json_schema"]["schema"]
    assert found == expected
    assert {type(value) for value in found.values()} == {type(value) for value in expected.values()}


@pytest.mark.parametrize("answer", ["No code here, sorry.", "Only a command:\n```bash\nls\n```\n", "```\nunclosed"])
def test_no_code_in_markdown_gives_openevals_result_without_asking_the_judge(answer):
    options = {"prompt": THEIR_PROMPT, "code_extraction_strategy": "markdown_code_blocks"}
    theirs, expected, ours, found = _both(options, answer, VERDICT, **CALL)
    assert (
        found
        == expected
        == {
            "key": "code_correctness",
            "score": False,
            "comment": None,
            "metadata": {"code_extraction_failed": True},
        }
    )
    assert ours.requests == theirs.requests == []


async def test_an_async_extractor_is_awaited_as_openevals_awaits_it():
    async def extract(outputs):
        return "x = 1"

    theirs, ours = ScriptedClient([VERDICT]), ScriptedClient([VERDICT])
    options = {"prompt": THEIR_PROMPT, "code_extractor": extract, "model": "judge"}
    expected = await openevals_code.create_async_code_llm_as_judge(**options, judge=theirs.aio)(outputs="a", **CALL)
    found = await create_async_code_llm_as_judge(**options, judge=ours.aio)(outputs="a", **CALL)
    assert found == expected and ours.requests[0]["messages"] == theirs.requests[0]["messages"]
    assert "x = 1" in ours.requests[0]["messages"][0]["content"]


class CopyingModel(BaseChatModel):
    """A LangChain chat model that answers through tools, as OpenEvals' "llm" extraction asks it to.

    Asked for the code (OpenEvals' ExtractCode and NoCode tools, or our schema's ``code``) it gives
    ``code`` ("" for none); asked for a verdict, a true score. It keeps every conversation it was sent.
    """

    code: str = ""
    asked: list = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "copying"

    def bind_tools(self, tools, **kwargs):
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.asked.append([(message.type, message.content) for message in messages])
        tools = {tool["function"]["name"]: tool["function"] for tool in kwargs.get("tools", [])}
        if "ExtractCode" in tools:
            name, args = ("ExtractCode", {"code": self.code}) if self.code else ("NoCode", {"no_code": True})
        else:
            ((name, function),) = tools.items()
            asks_code = "code" in function["parameters"]["properties"]
            args = {"code": self.code} if asks_code else {"reasoning": "Fine.", "score": True}
        message = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "t1", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.mark.parametrize("code", ["def add(a, b):\n    return a + b\n", ""])
async def test_the_llm_strategy_on_a_langchain_judge_judges_the_code_openevals_judges(code):
    """The extraction's words are ours; the code it gives is judged in OpenEvals' messages, to OpenEvals' result."""
    options = {"prompt": THEIR_PROMPT, "code_extraction_strategy": "llm"}
    call = {"inputs": "Write add(a, b).", "outputs": f"Sure: {code}"}
    for theirs_factory, ours_factory in [
        (openevals_code.create_code_llm_as_judge, create_code_llm_as_judge),
        (openevals_code.create_async_code_llm_as_judge, create_async_code_llm_as_judge),
    ]:
        theirs, ours = CopyingModel(code=code), CopyingModel(code=code)
        expected, found = theirs_factory(**options, judge=theirs)(**call), ours_factory(**options, judge=ours)(**call)
        if inspect.isawaitable(expected):
            expected, found = await expected, await found
        assert found == expected
        assert len(ours.asked) == len(theirs.asked) == (2 if code else 1)  # no code: no verdict asked
        if code:
            assert ours.asked[-1] == theirs.asked[-1] and code in ours.asked[-1][-1][1]


def _builtin_class(error: BaseException) -> type:
    """The first built-in class an exception is: what code written against OpenEvals catches."""
    return next(cls for cls in type(error).__mro__ if cls.__module__ == "builtins")


@pytest.mark.parametrize(
    "options",
    [
        {"code_extractor": lambda outputs: outputs, "code_extraction_strategy": "markdown_code_blocks"},
        {"code_extractor": lambda outputs: outputs, "code_extraction_strategy": "llm"},
    ],
)
def test_both_ways_of_extraction_is_the_class_openevals_raises(options):
    with pytest.raises(Exception) as expected:
        openevals_code.create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]), **options)
    with pytest.raises(Exception) as found:
        create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]), **options)
    assert isinstance(found.value, _builtin_class(expected.value)), (expected.value, found.value)
    assert "code_extractor" in str(found.value) and "code_extraction_strategy" in str(found.value)


@pytest.mark.parametrize("outputs", [["def f(): pass"], {"steps": []}, {"content": "x"}, None, 42])
def test_outputs_that_are_no_answer_raise_the_class_openevals_raises(outputs):
    theirs = openevals_code.create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]), model="judge")
    ours = create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]), model="judge")
    with pytest.raises(Exception) as expected:
        theirs(inputs="q", outputs=copy.deepcopy(outputs))
    with pytest.raises(Exception) as found:
        ours(inputs="q", outputs=copy.deepcopy(outputs))
    assert isinstance(found.value, _builtin_class(expected.value)), (expected.value, found.value)


def test_no_outputs_is_the_type_error_openevals_raises():
    with pytest.raises(TypeError):
        openevals_code.create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]))(inputs="q")
    with pytest.raises(TypeError, match="outputs"):
        create_code_llm_as_judge(prompt=THEIR_PROMPT, judge=ScriptedClient([]))(inputs="q")


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (create_code_llm_as_judge, openevals_code.create_code_llm_as_judge),
        (create_async_code_llm_as_judge, openevals_code.create_async_code_llm_as_judge),
    ],
)
def test_the_factories_take_openevals_parameters_in_its_order_with_its_defaults(ours, theirs):
    their_parameters = inspect.signature(theirs).parameters
    our_parameters = inspect.signature(ours).parameters
    assert list(our_parameters)[: len(their_parameters)] == list(their_parameters)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in our_parameters.values())
    assert {name: our_parameters[name].default for name in their_parameters} == {
        name: p.default for name, p in their_parameters.items()
    }
    assert all(p.default is not inspect.Parameter.empty for p in list(our_parameters.values())[len(their_parameters) :])


def test_the_module_mirrors_openevals_code_llm():
    import localjudge.code.llm

    for name in openevals_code.__all__:
        assert hasattr(localjudge.code.llm, name), name
    assert our_code.CODE_CORRECTNESS_PROMPT != THEIR_PROMPT  # our words, the same placeholders
    for ours, theirs in [
        (our_code.CODE_CORRECTNESS_PROMPT, THEIR_PROMPT),
        (our_code.CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS, THEIR_REFERENCE_PROMPT),
    ]:
        from localjudge._prompts.prompting import template_fields

        assert set(template_fields(ours)) == set(template_fields(theirs))


FENCES = ["```", "```python", "```bash", "```json", "```c++", "````", "```Py3", " ```", "```\r"]
LINES = ["x = 1", "", "print('```')", "  ```", "text ``` inline"]


def _texts() -> list[str]:
    """Texts built from fences and lines in every small arrangement: where the block rules' corners are."""
    pieces = FENCES + LINES
    texts = ["\n".join(combo) for size in (2, 3, 4) for combo in itertools.product(pieces, repeat=size)]
    return [*texts, *(text + "\n" for text in texts[::7]), ANSWER, "```\n```", "```py\n```\n```js\nb\n```"]


def test_markdown_blocks_are_taken_as_openevals_takes_them():
    extract = openevals_code_base._extract_code_from_markdown_code_blocks
    differ = [text for text in _texts() if markdown_code(text) != extract(text)]
    assert differ == []
