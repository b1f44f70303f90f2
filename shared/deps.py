"""The one object an app's route handlers depend on, instead of loose names on ``app.state``.

The gateway builds its dependencies once at start (``services/gateway/deps.py`` extends
``AppDeps``) and keeps them as ``app.state.deps``, the only name on ``app.state``: a
``Deployment`` holding one ``AppDeps`` per tenant. A service's staff routes, which the gateway
mounts, take the part every app has (settings, Redis, keys) with ``deps: AppDepends`` and so
never import the gateway (services do not import each other).

Whose dependencies a request gets is decided here, before any route runs: a deployment of one
business has one set and every request gets it (the routes' own token checks apply, as
before). With several tenants the bearer token picks the tenant: a tenant's admin or API token
is that tenant's, and ``ORQ_ADMIN_TOKEN`` is the operator's, who names the tenant with the
``X-Orq-Tenant`` header. The tenant's ``AppDeps`` carry its own settings, so the routes' token
checks then compare with that tenant's tokens.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from redis.asyncio import Redis

from shared.keys import Keys
from shared.settings import Settings
from shared.tenants import TENANT_HEADER, Tenant


@dataclass(frozen=True)
class AppDeps:
    settings: Settings
    redis: Redis
    keys: Keys


def matches(given: str | None, expected: str | None) -> bool:
    """Constant-time equality; an unset expected token matches nothing."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def bearer(request: Request) -> str | None:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return given.strip() or None


def _digest(token: str) -> bytes:
    """Tokens are looked up by their hash, so the lookup reveals nothing of a near miss."""
    return hashlib.sha256(token.encode()).digest()


def _refuse(status: int, reason: str) -> HTTPException:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return HTTPException(status_code=status, detail=reason, headers=headers)


@dataclass(frozen=True)
class Deployment:
    """Every tenant's dependencies (enabled tenants only) and how a request picks one."""

    tenants: list[Tenant]
    deps: dict[str, AppDeps]
    # The operator's token (ORQ_ADMIN_TOKEN) with several tenants; None with one.
    operator_token: str | None = None
    # The tenant a token names itself, if its kind does (the gateway's web chat tokens, made
    # for one conversation of one tenant: the route's own check then verifies it).
    token_tenant: Callable[[str], str | None] | None = None
    # The (channel, route id) pairs of a tenant's channel sections that route an inbound
    # webhook to it (a business number, an instance, an account): the gateway's channels say.
    channel_routes: Callable[[Tenant], Iterable[tuple[str, str]]] | None = None
    _owners: dict[bytes, str] = field(default_factory=dict, init=False, repr=False)
    _routes: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)
    # Each tenant's dependencies as the operator sees them (its admin token is the
    # operator's), made once rather than per request.
    _as_operator: dict[str, AppDeps] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.operator_token:
            for tenant_id, deps in self.deps.items():
                update = {"admin_token": self.operator_token}
                self._as_operator[tenant_id] = replace(
                    deps, settings=deps.settings.model_copy(update=update)
                )
        for tenant in self.tenants:
            for token in (tenant.settings.admin_token, tenant.settings.api_token):
                if token:
                    self._owners[_digest(token)] = tenant.id
            for route in self.channel_routes(tenant) if self.channel_routes else ():
                self._routes[route] = tenant.id

    @property
    def single(self) -> bool:
        return len(self.tenants) == 1 and not self.tenants[0].id

    def any(self) -> AppDeps:
        """Some tenant's dependencies, for what belongs to the whole deployment (liveness,
        the bus): every tenant shares the Redis clients and the process."""
        return next(iter(self.deps.values()))

    def problems(self) -> dict[str, str]:
        """Each tenant's state: ``ok``, or why it is disabled."""
        return {tenant.id: tenant.problem or "ok" for tenant in self.tenants}

    def of_tenant(self, tenant_id: str) -> AppDeps:
        """A tenant's dependencies; 404 for no such tenant, 503 for a disabled one."""
        if tenant_id in self.deps:
            return self.deps[tenant_id]
        problem = next((t.problem for t in self.tenants if t.id == tenant_id), None)
        if problem:
            raise _refuse(503, problem)
        raise _refuse(404, f"no tenant {tenant_id!r} in this deployment")

    def of_routes(self, channel: str, routes: set[str]) -> AppDeps | None:
        """The dependencies of the one tenant the route ids of a ``channel``'s webhook (its
        business numbers, its instance...) all belong to; None when they name no tenant, an
        unknown id or two tenants. A deployment of one answers for every id, as before."""
        if self.single:
            return self.any()
        owners = {self._routes.get((channel, route)) for route in routes}
        if len(owners) != 1 or None in owners:
            return None
        [tenant_id] = owners
        return self.deps.get(str(tenant_id))

    def of_request(self, request: Request) -> AppDeps:
        """The dependencies of the tenant the request's token names (see the module's doc)."""
        if self.single:
            return self.any()
        given = bearer(request)
        named = request.headers.get(TENANT_HEADER)
        owner = self._owners.get(_digest(given)) if given else None
        if owner is None and given and self.token_tenant:
            owner = self.token_tenant(given)
        if owner is not None:
            if named and named != owner:
                raise _refuse(
                    403,
                    f"this token belongs to tenant {owner!r}; it cannot act for tenant {named!r}",
                )
            return self.of_tenant(owner)
        if matches(given, self.operator_token):
            if not named:
                raise _refuse(
                    400,
                    "the operator's token (ORQ_ADMIN_TOKEN) serves every tenant: name one "
                    "with the X-Orq-Tenant header",
                )
            self.of_tenant(named)  # 404 or 503 for a tenant not served
            return self._as_operator[named]
        raise _refuse(401, "missing or invalid bearer token: this deployment serves several "
                      "businesses, and a request needs one's token")  # fmt: skip

    def of_public(self, request: Request) -> AppDeps:
        """For the routes anyone may call (a public web chat page opening its session): the
        tenant the request names with ``?tenant=<id>`` or the ``X-Orq-Tenant`` header."""
        if self.single:
            return self.any()
        named = request.headers.get(TENANT_HEADER) or request.query_params.get("tenant")
        if not named:
            raise _refuse(
                400,
                "this deployment serves several businesses: name one with ?tenant=<id> or "
                "the X-Orq-Tenant header",
            )
        return self.of_tenant(named)


async def deployment(request: Request) -> Deployment:
    """``app.state.deps``. Async on purpose: a plain ``def`` dependency would run in a thread."""
    deps = getattr(request.app.state, "deps", None)
    if not isinstance(deps, Deployment):
        raise RuntimeError("the app's dependencies are not built yet (its lifespan did not run)")
    return deps


async def app_deps(request: Request) -> AppDeps:
    """The dependencies of the request's tenant (the only one, for a deployment of one)."""
    return (await deployment(request)).of_request(request)


async def public_deps(request: Request) -> AppDeps:
    """The dependencies of the tenant a public request names (``Deployment.of_public``)."""
    return (await deployment(request)).of_public(request)


AppDepends = Annotated[AppDeps, Depends(app_deps)]
PublicDepends = Annotated[AppDeps, Depends(public_deps)]
DeploymentDepends = Annotated[Deployment, Depends(deployment)]
