"""Real frameworks pointed at the embedded endpoint close the loop: call, result, answer.

LangChain (``ChatOpenAI(...).bind_tools``) and the OpenAI Agents SDK (``Agent`` + ``Runner``,
over chat completions and over the Responses API) talk to the endpoint as they would to
OpenAI. Each round trip must end in text that states the tool's result. The model is the
embedded default at temperature 0 with a fixed seed, so each run is the same run.
"""

import json

import pytest

pytestmark = pytest.mark.embedded

QUESTION = "What's the weather in Shanghai?"
FACTS = {"city": "Shanghai", "condition": "cloudy", "temperature": 27, "unit": "celsius"}


def weather(city: str) -> str:
    """Get the current weather (condition and temperature) in one city.

    Args:
        city: City name, e.g. Beijing.
    """
    return json.dumps({**FACTS, "city": city}) if "shanghai" in city.lower() else json.dumps({"city": city, "found": False})


def states_the_result(text: str) -> bool:
    return "27" in text or "cloudy" in text.lower()


@pytest.fixture(scope="module")
def base_url():
    from toolkit.engine.serve import ensure_server

    return ensure_server()


def test_langchain_bind_tools_round_trip_ends_in_an_answer_from_the_result(base_url):
    import langchain_openai  # in the test requirements: a missing package fails, never skips
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    get_weather = tool(weather)
    get_weather.name = "get_weather"
    model = langchain_openai.ChatOpenAI(base_url=base_url, api_key="no-key-needed", model="SmolLM2-135M-Instruct",
                                        temperature=0, seed=0, max_tokens=120).bind_tools([get_weather])
    messages = [HumanMessage(QUESTION)]
    asked = model.invoke(messages)
    assert [call["name"] for call in asked.tool_calls] == ["get_weather"]
    messages.append(asked)
    messages += [get_weather.invoke(call) for call in asked.tool_calls]  # ToolMessages, matched by id
    answer = model.invoke(messages)
    assert answer.tool_calls == []
    assert states_the_result(answer.content), answer.content


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_agents_sdk_runner_ends_in_an_answer_from_the_result(base_url, api):
    import agents  # the OpenAI Agents SDK, in the test requirements
    from openai import AsyncOpenAI

    agents.set_tracing_disabled(True)  # traces would be sent to OpenAI's servers
    client = AsyncOpenAI(base_url=base_url, api_key="no-key-needed")
    model_class = agents.OpenAIChatCompletionsModel if api == "chat" else agents.OpenAIResponsesModel
    calls = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Get the current weather (condition and temperature) in one city.

        Args:
            city: City name, e.g. Beijing.
        """
        calls.append(city)
        return weather(city)

    agent = agents.Agent(name="weather", tools=[get_weather],
                         model=model_class(model="SmolLM2-135M-Instruct", openai_client=client),
                         model_settings=agents.ModelSettings(temperature=0, max_tokens=400, extra_body={"seed": 0}))
    result = agents.Runner.run_sync(agent, QUESTION, max_turns=4)
    assert calls, "the agent never called the tool"
    assert isinstance(result.final_output, str) and states_the_result(result.final_output), result.final_output
