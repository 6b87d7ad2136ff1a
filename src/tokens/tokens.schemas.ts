// Signing in: credentials in, a bearer token out.
import { type Static, Type } from 'typebox'
import { SCOPES } from '../core/caller.js'
import { Line, StringEnum, Timestamp } from '../core/schema-types.js'

const TokenScope = StringEnum(SCOPES, {
  description: '`read`: GET requests, queries and subscriptions. `write` (the default): all the user may do.',
})

export const SignInBody = Type.Object(
  {
    // Not checked as an address (a wrong one is a failed sign-in, 401), but one line of text:
    // PostgreSQL's text cannot hold NUL, and no stored address has a control character.
    email: Line({ maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 200 }),
    scope: Type.Optional(TokenScope),
  },
  { additionalProperties: false },
)
export type SignInInput = Static<typeof SignInBody>

export const IssuedToken = Type.Object({
  token: Type.String({ description: 'Send it as `Authorization: Bearer <token>`. Shown once; only its hash is kept.' }),
  expiresAt: Timestamp,
  scope: TokenScope,
})
export type IssuedToken = Static<typeof IssuedToken>
