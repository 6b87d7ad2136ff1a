// The tokens' part of the API description: their tag, an example of a token as issued and the example
// sign-in body tokens.routes.ts declares. Module constants: both versions' operations show the same objects.
import type { ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const tokensOpenApi: ResourceOpenApi = {
  tag: { name: 'Tokens', description: 'Bearer tokens: sign in for one, revoke it.' },
  noun: 'token',
  example: { token: 'tl_8kq3J1dYx0aQ7nW2uVt5rS9pL4mE6cB1zH0gF3yK2iA', expiresAt: '2026-12-25T22:27:04.243Z', scope: 'write' },
}

export const tokenRequestExamples = {
  signIn: { email: 'grace@example.com', password: 'cobol-forever' },
}
