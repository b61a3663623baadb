"""Mirror of ``openevals.llm``: ``from localjudge.llm import ...`` works where OpenEvals code expects it."""

from ._judges.single import create_async_llm_as_judge, create_llm_as_judge
from ._prompts.schema import default_output_schema as _construct_default_output_json_schema

__all__ = ["_construct_default_output_json_schema", "create_async_llm_as_judge", "create_llm_as_judge"]
