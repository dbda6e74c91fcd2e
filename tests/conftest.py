import pytest

import specs


@pytest.fixture(scope="session")
def embedded():
    """The embedded model behind its HTTP endpoint, reached through the openai client."""
    from toolkit.client import connect

    return connect(capture=True)


@pytest.fixture
def weather_spec():
    """A get_weather tool spec of this test's own (see specs.py)."""
    return specs.weather_spec()
