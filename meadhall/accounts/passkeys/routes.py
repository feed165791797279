"""Routes of /auth/passkeys/*: parse, one service call, respond (docs/passkeys.md)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from meadhall.accounts.passkeys import manage, signin
from meadhall.accounts.passkeys import schemas as s
from meadhall.accounts.schemas import SignInResponse
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.cookies import session_cookie
from meadhall.auth.deps import ClientInfo, PrincipalDep, limited
from meadhall.core.ids import parse_id

router = APIRouter(prefix="/auth/passkeys", tags=["auth"])

_CEREMONY = [limited("auth.passkey")]
_NO_STORE = {"Cache-Control": "no-store"}


@router.post(
    "/register/options", operation_id="passkeyRegisterOptions", response_model=s.CeremonyResponse,
    dependencies=_CEREMONY,
    responses=errors("auth.passkey_unsupported", "auth.step_up_required", "passkey.limit_reached",
                     "auth.origin_mismatch"),
)
async def register_options(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await manage.do_registration_options(rt, principal)


@router.post(
    "/register/verify", operation_id="passkeyRegisterVerify", status_code=201, response_model=s.PasskeyResponse,
    dependencies=_CEREMONY,
    responses=errors("auth.ceremony_invalid", "auth.passkey_failed", "auth.passkey_unsupported",
                     "auth.step_up_required", "passkey.already_registered", "passkey.limit_reached",
                     "auth.origin_mismatch"),
)
async def register_verify(rt: RuntimeDep, body: s.PasskeyRegisterVerifyRequest, principal: PrincipalDep,
                          client: ClientInfo) -> dict:
    return await manage.do_register_passkey(rt, principal, body.ceremony_id, body.credential, body.name, client)


@router.post(
    "/login/options", operation_id="passkeyLoginOptions", response_model=s.CeremonyResponse, dependencies=_CEREMONY,
    responses=errors("auth.passkey_unsupported"),
)
async def login_options(rt: RuntimeDep, body: s.PasskeyLoginOptionsRequest | None = None) -> dict:
    return await signin.do_login_options(rt, body.email if body else None)


@router.post(
    "/login/verify", operation_id="passkeyLoginVerify", response_model=SignInResponse, dependencies=_CEREMONY,
    responses=errors("auth.ceremony_invalid", "auth.passkey_failed", "auth.passkey_unsupported", "user.banned",
                     "auth.2fa_enrollment_required"),
)
async def login_verify(rt: RuntimeDep, body: s.PasskeyLoginVerifyRequest, client: ClientInfo) -> JSONResponse:
    result = await signin.do_login_verify(rt, body.ceremony_id, body.credential, client)
    response = JSONResponse(result.body(rt), headers=_NO_STORE)
    response.headers.append("Set-Cookie", session_cookie(rt.settings, result.session.token))
    return response


@router.get("", operation_id="listPasskeys", response_model=s.PasskeysResponse)
async def list_passkeys(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return {"passkeys": await manage.access_own_passkeys(rt, principal)}


@router.patch(
    "/{passkey_id}", operation_id="renamePasskey", response_model=s.PasskeyResponse,
    responses=errors("passkey.not_found", "auth.step_up_required", "auth.origin_mismatch"),
)
async def rename_passkey(rt: RuntimeDep, passkey_id: str, body: s.PasskeyRenameRequest, principal: PrincipalDep,
                         client: ClientInfo) -> dict:
    return await manage.do_rename_passkey(rt, principal, parse_id(passkey_id), body.name, client)


@router.delete(
    "/{passkey_id}", operation_id="revokePasskey", status_code=204,
    responses=errors("passkey.not_found", "auth.step_up_required", "auth.origin_mismatch"),
)
async def revoke_passkey(rt: RuntimeDep, passkey_id: str, principal: PrincipalDep, client: ClientInfo) -> Response:
    await manage.do_revoke_passkey(rt, principal, parse_id(passkey_id), client)
    return Response(status_code=204)
