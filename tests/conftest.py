import pytest


@pytest.fixture(scope="session")
def embedded():
    """The embedded model behind its HTTP endpoint, reached through the openai client."""
    from toolkit.client import connect

    return connect(capture=True)
