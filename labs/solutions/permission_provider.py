"""Reference solution for labs/11_permission_provider.py."""

from labs.graders.permission_provider import ROLES, STATIC, delete_user, reset_password
from toolkit.messages import ToolCall
from toolkit.tools import ToolRequest, render_result, tools_for_turn


def admin_tools(request: ToolRequest):
    """delete_user for admins, reset_password for admins and support staff; nothing for others."""
    user = request.context.user if request.context else None
    roles = ROLES.get(user, set())
    tools = []
    if "admin" in roles:
        tools.append(delete_user)
    if roles & {"admin", "support"}:
        tools.append(reset_password)
    return tools or None


def run_call(call: ToolCall, request: ToolRequest, provider) -> str:
    """Run the call only if the tool is offered for this request; a withheld tool gets the same
    answer as one that does not exist, so the model cannot learn that others have it."""
    tool = tools_for_turn(STATIC, [provider], request).get(call.name)
    if tool is None:
        return (f"Error: there is no tool named {call.name!r}. Call one of the tools offered, "
                "or answer without a tool.")
    return render_result(tool.invoke(call.arguments))
