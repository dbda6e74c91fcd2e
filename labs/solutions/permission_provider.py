"""Reference solution for labs/11_permission_provider.py."""

from labs.graders.permission_provider import ROLES, delete_user, reset_password
from toolkit.tools import ToolRequest


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
