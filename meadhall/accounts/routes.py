"""Routes of /auth/* and /users/*: parse, one service call, respond."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from meadhall.accounts import profile, signin, twofactor
from meadhall.accounts import schemas as s
from meadhall.accounts.avatar import Avatar
from meadhall.accounts.field_schemas import EMAIL_LENGTHS, TOO_COMMON
from meadhall.accounts.passkeys import signin as passkey_signin
from meadhall.api.deps import RuntimeDep, runtime_of
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules
from meadhall.api.pagination import BeforePagination
from meadhall.api.plain import PlainRoute, json_body, json_response
from meadhall.auth import sessions
from meadhall.auth.cookies import cleared_cookie, session_cookie
from meadhall.auth.deps import ClientInfo, PrincipalDep, limited, plain_session
from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.runtime import Runtime

auth = APIRouter(prefix="/auth", tags=["auth"])
users = APIRouter(prefix="/users", tags=["users"])
# The avatar routes keep the `files` tag they have always been documented under.
avatar = APIRouter(prefix="/users", tags=["files"])


def _signed_in(rt: Runtime, result: signin.SignIn, status: int) -> JSONResponse:
    response = JSONResponse(result.body(rt), status_code=status, headers=NO_STORE)
    response.headers.append("Set-Cookie", session_cookie(rt.settings, result.session.token))
    return response


# Answers carrying a session token, a TOTP secret or backup codes are never stored (a shared cache
# must not keep a credential).
NO_STORE = {"Cache-Control": "no-store"}


def _not_stored(response: Response) -> None:
    response.headers["Cache-Control"] = "no-store"


def _no_content_clearing_cookie(rt: Runtime) -> Response:
    response = Response(status_code=204)
    response.headers.append("Set-Cookie", cleared_cookie(rt.settings))
    return response


@auth.post(
    "/register", status_code=201, response_model=s.SignInResponse, dependencies=[limited("auth.register")],
    openapi_extra=rules({"password": TOO_COMMON, "email": EMAIL_LENGTHS}),
    responses=errors("auth.registration_disabled", "user.username_taken", "user.email_taken"),
)
async def register(rt: RuntimeDep, body: s.RegisterRequest, client: ClientInfo) -> JSONResponse:
    new = signin.NewAccount(body.username, body.email, body.password, body.display_name, body.locale, body.timezone)
    return _signed_in(rt, await signin.do_register(rt, new, client), 201)


@auth.post(
    "/login", response_model=s.SignInResponse, dependencies=[limited("auth.login")],
    responses=errors("auth.invalid_credentials", "auth.2fa_required", "auth.invalid_code", "user.banned",
                     "auth.2fa_enrollment_required"),
)
async def login(rt: RuntimeDep, body: s.LoginRequest, client: ClientInfo) -> JSONResponse:
    result = await signin.do_login(rt, body.login, body.password, body.totp_code, body.backup_code, client)
    return _signed_in(rt, result, 200)


@auth.post("/logout", status_code=204, responses=errors("auth.origin_mismatch"))
async def logout(rt: RuntimeDep, principal: PrincipalDep) -> Response:
    await sessions.do_logout(rt, principal)
    return _no_content_clearing_cookie(rt)


@auth.post("/logout-all", status_code=204, responses=errors("auth.origin_mismatch"))
async def logout_all(rt: RuntimeDep, principal: PrincipalDep, client: ClientInfo) -> Response:
    await sessions.do_logout_all(rt, principal, client)
    return _no_content_clearing_cookie(rt)


@auth.get("/sessions", response_model=s.SessionsResponse)
async def list_sessions(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return {"sessions": await sessions.access_own_sessions(rt, principal)}


@auth.delete("/sessions/{session_id}", status_code=204, responses=errors("session.not_found", "auth.origin_mismatch"))
async def revoke_session(rt: RuntimeDep, session_id: str, principal: PrincipalDep, client: ClientInfo) -> Response:
    await sessions.do_revoke_session(rt, principal, parse_id(session_id), client)
    return Response(status_code=204)


@auth.post(
    "/step-up", response_model=s.StepUpResponse, dependencies=[limited("auth.step_up")],
    responses=errors("auth.invalid_credentials", "auth.2fa_required", "auth.invalid_code", "auth.passkey_failed",
                     "auth.ceremony_invalid", "auth.passkey_unsupported"),
)
async def step_up(rt: RuntimeDep, body: s.StepUpRequest, principal: PrincipalDep, client: ClientInfo) -> dict:
    if body.by_passkey:
        assert body.ceremony_id is not None and body.credential is not None
        return await passkey_signin.do_step_up_by_passkey(rt, principal, body.ceremony_id, body.credential, client)
    assert body.password is not None
    return await signin.do_step_up(rt, principal, body.password, body.totp_code, body.backup_code, client)


@auth.post(
    "/password", status_code=204, dependencies=[limited("auth.password")],
    openapi_extra=rules({"new_password": TOO_COMMON}),
    responses=errors("auth.step_up_required"),
)
async def change_password(rt: RuntimeDep, body: s.PasswordRequest, principal: PrincipalDep, client: ClientInfo
                          ) -> Response:
    await signin.do_change_password(rt, principal, body.new_password, client)
    return Response(status_code=204)


@auth.post(
    "/2fa/setup", operation_id="setupTwoFactor",
    response_model=s.TwoFactorSetupResponse, dependencies=[limited("auth.2fa")],
    responses=errors("auth.2fa_already_enabled"),
)
async def twofactor_setup(rt: RuntimeDep, response: Response, principal: PrincipalDep) -> dict:
    _not_stored(response)
    return await twofactor.do_setup_two_factor(rt, principal)


@auth.post(
    "/2fa/enable", operation_id="enableTwoFactor",
    response_model=s.TwoFactorEnableResponse, dependencies=[limited("auth.2fa")],
    responses=errors("auth.invalid_code", "auth.2fa_already_enabled", "auth.2fa_setup_required"),
)
async def twofactor_enable(rt: RuntimeDep, response: Response, body: s.TotpCodeRequest, principal: PrincipalDep,
                           client: ClientInfo) -> dict:
    _not_stored(response)
    return await twofactor.do_enable_two_factor(rt, principal, body.totp_code, client)


@auth.post(
    "/2fa/disable", operation_id="disableTwoFactor",
    response_model=s.UserResponse, dependencies=[limited("auth.2fa")],
    responses=errors("auth.invalid_code", "perm.denied", "auth.step_up_required", "auth.2fa_not_enabled"),
)
async def twofactor_disable(rt: RuntimeDep, body: s.DisableTwoFactorRequest, principal: PrincipalDep,
                            client: ClientInfo) -> dict:
    return await twofactor.do_disable_two_factor(rt, principal, body.totp_code, body.backup_code, client)


@auth.post(
    "/2fa/backup-codes", operation_id="regenerateBackupCodes",
    response_model=s.BackupCodesResponse, dependencies=[limited("auth.2fa")],
    responses=errors("auth.step_up_required", "auth.2fa_not_enabled"),
)
async def twofactor_backup_codes(rt: RuntimeDep, response: Response, principal: PrincipalDep, client: ClientInfo
                                 ) -> dict:
    _not_stored(response)
    return await twofactor.do_regenerate_backup_codes(rt, principal, client)


# ---- users -------------------------------------------------------------------------------------


@users.get("/@me", response_model=s.UserResponse)
async def get_me(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return {"user": await profile.access_me(rt, principal)}


@users.patch("/@me", operation_id="updateMe", response_model=s.UserResponse, responses=errors("auth.origin_mismatch"))
async def patch_me(rt: RuntimeDep, body: s.ProfilePatch, principal: PrincipalDep) -> dict:
    return {"user": await profile.do_update_me(rt, principal, body.changes())}


@users.post("/@me/onboarding/complete", response_model=s.UserResponse)
async def complete_onboarding(rt: RuntimeDep, body: s.OnboardingRequest, principal: PrincipalDep) -> dict:
    return {"user": await profile.do_update_me(rt, principal, body.changes(), onboarding=True)}


@users.get("/@me/security-events", operation_id="listSecurityEvents", response_model=s.SecurityEventsResponse)
async def security_events(request: Request, rt: RuntimeDep, principal: PrincipalDep, page: BeforePagination
                          ) -> dict:
    # This list pages backwards only (OpenAPI: listSecurityEvents): `after` is not a parameter of it,
    # and is refused rather than ignored so that a client expecting the other direction learns it at once.
    if "after" in request.query_params:
        raise validation_error("after", "not supported here")
    return await profile.access_security_events(rt, principal, page.before, page.limit)


@users.get("/{user_id}", response_model=s.UserSummaryResponse, responses=errors("user.not_found"))
async def get_user(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> dict:
    return {"user": await profile.access_user_summary(rt, user_id)}


# ---- the avatar (the generic upload flow is meadhall.files.slots) -------------------------------


@avatar.post("/@me/avatar", response_model=s.UserResponse, dependencies=[limited("uploads")],
             openapi_extra=IMAGE_UPLOAD_BODY, responses=errors(*UPLOAD_ERRORS))
async def set_avatar(request: Request, rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await slots.set_image(rt, Avatar(rt, principal.user_id), multipart_file(request),
                                 uploader_id=principal.user_id)


@avatar.delete("/@me/avatar", response_model=s.UserResponse, responses=errors("auth.origin_mismatch"))
async def remove_avatar(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await slots.remove_image(rt, Avatar(rt, principal.user_id))


# ---- plain routes (api/plain.py), matched before the documented ones above -----------------------------


# updateMe as a plain route (the pattern of docs/benchmarks.md, "Plain routes for send and history"): a status
# change reaches every friend and every server of the user, so its CPU counts per delivery, and FastAPI's
# dependency solving, body handling and response validation cost about 1 ms of it (in process: 5.7 -> 4.5 ms
# per custom-status change of a user with 1,000 friends in 100 servers). The documented route above answers
# whatever this declines: any body that is not a JSON object of the ProfilePatch shape.


async def _plain_patch_me(request: Request) -> Response | None:
    body = await json_body(request, s.ProfilePatch)
    if body is None:
        return None
    # The documented route's dependencies, in their order: the `global` bucket, then the session (401,
    # and the origin check of a cookie session).
    principal = await plain_session(request)
    user = await profile.do_update_me(runtime_of(request), principal, body.changes())
    return json_response({"user": user})


def plain_routes(prefix: str) -> list[PlainRoute]:
    return [PlainRoute(f"{prefix}/users/@me", _plain_patch_me, "PATCH")]
