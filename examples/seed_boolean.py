from localjudge import create_async_llm_as_judge
from _demo_judge import demo_judge
import asyncio,json

prompt="""\
确认针对指定问题的提供的答案是否正确：

**问题**
{inputs}

**答案**
{outputs}
"""

async def eval(outputs:str):
    evaluator = create_async_llm_as_judge(
        prompt = prompt,
        judge= demo_judge())
    result = await evaluator(
        inputs= "说出战国四大名将的姓名",
        outputs=outputs
    )
    print(json.dumps(result,ensure_ascii=False, indent=2))

async def main():
    await eval("吴起、廉颇、李牧和王翦")    
    await eval("白起、廉颇、李牧和王翦")

asyncio.run(main())
