import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

describe('todos', () => {
  it('the owner adds a todo: 201, Location, not completed', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v2/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text: 'Buy milk' } })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(data).toMatchObject({ userId: t.bob.id, text: 'Buy milk', completed: false })
    expect(res.headers.location).toBe(`/api/v2/users/${t.bob.id}/todos/${data.id}`)
    expect((await t.request({ method: 'GET', url: res.headers.location })).json().data).toEqual(data)
  })

  it('refuses completed and unknown fields on POST (422)', async () => {
    const res = await t.request({ method: 'POST', url: `/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text: 'x', completed: true } })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toEqual([{ field: 'completed', message: 'is not a known field' }])
  })

  it('PATCH changes text and completed; "true" as text is not a boolean', async () => {
    const todo = await make.todo(t.bob, { text: 'Walk' })
    const url = `/users/${t.bob.id}/todos/${todo.id}`
    const done = await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { completed: true } })
    expect(done.json().data).toMatchObject({ text: 'Walk', completed: true })
    const bad = await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { completed: 'true' } })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().error.details).toEqual([{ field: 'completed', message: 'must be true or false' }])
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos?completed=true` })).json().data.map((x: { id: number }) => x.id)).toContain(todo.id)
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos?completed=false` })).json().data.map((x: { id: number }) => x.id)).not.toContain(
      todo.id,
    )
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos?completed=yes` })).statusCode).toBe(400)
  })

  it('everyone reads; only the owner or an admin writes', async () => {
    const todo = await make.todo(t.bob)
    const url = `/users/${t.bob.id}/todos/${todo.id}`
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(200)
    expect((await t.request({ method: 'POST', url: `/users/${t.bob.id}/todos`, token: t.tokens.alice, json: { text: 'x' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { completed: true } })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(403)
    expect((await t.request({ method: 'PATCH', url })).statusCode).toBe(401)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { completed: true } })).statusCode).toBe(200)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(404)
  })

  it('a todo under another user, or under a missing user, is 404; PUT is 405', async () => {
    const todo = await make.todo(t.bob)
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}/todos/${todo.id}` })).statusCode).toBe(404)
    expect((await t.request({ method: 'PATCH', url: `/users/${t.alice.id}/todos/${todo.id}`, token: t.tokens.admin, json: { text: 'x' } })).statusCode).toBe(
      404,
    )
    expect((await t.request({ method: 'GET', url: '/users/999999/todos' })).statusCode).toBe(404)
    const put = await t.request({ method: 'PUT', url: `/users/${t.bob.id}/todos/${todo.id}`, token: t.tokens.bob, json: { text: 'x' } })
    expect(put.statusCode).toBe(405)
  })
})
