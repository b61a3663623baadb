from localjudge import create_async_llm_as_judge
from localjudge.types import FewShotExample
from _demo_judge import demo_judge
import asyncio,json

prompt="""\
确认针对指定问题的提供的答案是否正确：

**问题**
{inputs}

**答案**
{outputs}
"""
inputs= "说出战国四大名将的姓名",
few_shot_examples:list[FewShotExample] = [
     {"inputs":inputs , "outputs":"吴起、司马错、乐毅、蒙恬", "score":0.0, "reasoning":"四个都错"},
     {"inputs":inputs , "outputs":"白起、司马错、乐毅、蒙恬", "score":0.25, "reasoning":"四个错其三"},
     {"inputs":inputs , "outputs":"白起、李牧、乐毅、蒙恬", "score":0.50, "reasoning":"四个错其二"},
     {"inputs":inputs , "outputs":"白起、李牧、王翦、蒙恬", "score":0.75, "reasoning":"四个错其一"},
     {"inputs":inputs , "outputs":"白起、李牧、王翦、廉颇", "score":1.0, "reasoning":"四个都对"},
]

async def eval(outputs:str):
    evaluator = create_async_llm_as_judge(
        prompt = prompt,
        continuous= True,
        choices=[0.0,0.25,0.50,0.75,1.0],        
        judge= demo_judge(),
        few_shot_examples=few_shot_examples)
    result = await evaluator(
        inputs= inputs,
        outputs=outputs
    )
    print(json.dumps(result,ensure_ascii=False, indent=2))

async def main():
    await eval("孙膑、李牧、王翦、廉颇")    
    await eval("孙膑、庞涓、李牧和司马错")

asyncio.run(main())
