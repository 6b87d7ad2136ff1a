// `Bearer undefined`: what a JavaScript client sends when the variable meant to hold its token was
// never set. Refused as any unknown token is (a token that is sent must be valid: it never falls
// back to anonymous), in a few words that name the client's mistake, over REST and as a
// WebSocket's close reason alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listening, rawSocket } from '../helpers/subscription-clients.js'

const UNSET = (token: string) => `"Bearer ${token}" holds no token (an unset variable?): send one, or no Authorization to be anonymous`

let server: Listening
beforeAll(async () => {
  server = await listening()
})
afterAll(() => server.t.close())

describe('a token that was never set', () => {
  it.each(['undefined', 'null'])('answers "Bearer %s" with 401 saying no token was set, over REST', async (token) => {
    const res = await server.t.request({ url: '/api/v1/users/1', headers: { authorization: `Bearer ${token}` } })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toEqual({ code: 'UNAUTHENTICATED', message: UNSET(token) })
  })

  it('closes a WebSocket whose connection_init carries "Bearer undefined" with 4401 and that short reason', async () => {
    const socket = rawSocket(server.ws)
    await socket.opened
    socket.send({ type: 'connection_init', payload: { authorization: 'Bearer undefined' } })
    const closed = await socket.closed
    expect(closed).toEqual({ code: 4401, reason: UNSET('undefined') })
    expect(socket.messages).toEqual([])
  })
})
