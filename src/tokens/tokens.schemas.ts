// Signing in: credentials in, a bearer token out.
import { type Static, Type } from 'typebox'
import { Timestamp } from '../schema-types.js'

export const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
)
export type SignInInput = Static<typeof SignInBody>

export const IssuedToken = Type.Object({
  token: Type.String({ description: 'Send it as `Authorization: Bearer <token>`. Shown once; only its hash is kept.' }),
  expiresAt: Timestamp,
})
export type IssuedToken = Static<typeof IssuedToken>
