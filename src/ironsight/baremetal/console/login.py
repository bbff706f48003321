"""The console's login: a user name and password checked once, by the configured
`auth_strategy`, through the very authenticator the API uses (so the same users, roles and
projects apply). Keystone users get a token for their credentials first; the token itself is
not kept."""

from __future__ import annotations

import asyncio
import base64
import logging

from ironsight.common.auth.identity import ANONYMOUS_ADMIN, Identity
from ironsight.common.auth.middleware import Authenticator, Forbidden, Unavailable
from ironsight.common.config import Config

LOG = logging.getLogger(__name__)
MAX_FIELD = 255


class LoginRefused(Exception):
    """Shown on the login form as it is: never says whether the user or the password was
    wrong."""


async def log_in(conf: Config, authenticator: Authenticator, user: str, password: str,
                 project: str = "") -> Identity:
    if authenticator.name == "noauth":
        return ANONYMOUS_ADMIN
    if not user or not password:
        raise LoginRefused("Give a user name and a password.")
    if len(user) > MAX_FIELD or len(password) > MAX_FIELD or len(project) > MAX_FIELD:
        raise LoginRefused("The user name, password or project is too long.")
    if authenticator.name == "keystone":
        token = await asyncio.to_thread(_keystone_token, conf, user, password, project)
        headers = {"x-auth-token": token}
    else:
        basic = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers = {"authorization": f"Basic {basic}"}
    try:
        identity = await authenticator.identify(headers)
    except Forbidden as exc:
        raise LoginRefused(str(exc)) from None
    except Unavailable as exc:
        raise LoginRefused(str(exc)) from None
    if identity is None:
        LOG.info("Console login refused for user %r", user)
        raise LoginRefused("Wrong user name or password.")
    LOG.info("Console login: user %r, role %s", identity.user, identity.role.name.lower())
    return identity


def _keystone_token(conf: Config, user: str, password: str, project: str) -> str:
    """A token for the user's credentials, scoped to `project` or else to the system."""
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import session
    from keystoneauth1.identity import generic

    section = conf.keystone_authtoken
    if project:
        auth = generic.Password(auth_url=section.auth_url, username=user, password=password,
                                user_domain_name=section.user_domain_name,
                                project_name=project,
                                project_domain_name=section.project_domain_name)
    else:
        auth = generic.Password(auth_url=section.auth_url, username=user, password=password,
                                user_domain_name=section.user_domain_name, system_scope="all")
    keystone = session.Session(auth=auth, verify=section.cafile or True,
                               timeout=section.http_connect_timeout)
    try:
        token = keystone.get_token()
    except ks_exc.Unauthorized:
        raise LoginRefused("Wrong user name or password, or no role on that project.") \
            from None
    except ks_exc.ClientException as exc:
        LOG.error("Console login: Keystone at %s failed: %s", section.auth_url, exc)
        raise LoginRefused("Authentication is unavailable: Keystone cannot be asked. Try "
                           "again later.") from None
    if not token:
        raise LoginRefused("Wrong user name or password.")
    return str(token)
