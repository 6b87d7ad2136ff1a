// Writers side by side (PostgreSQL runs them so; SQLite one at a time): each answers as if it ran
// alone — writers of different rows never refuse each other, and checks never go stale.
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

const statuses = (responses: { statusCode: number }[]) => responses.map((res) => res.statusCode).sort()

describe('concurrent writes', () => {
  it('lets 30 users change 30 different rows at once, every one of them', async () => {
    const writers = await Promise.all(Array.from({ length: 30 }, () => make.signedIn()))
    const owners = writers.map((writer) => writer.user)
    const tokens = writers.map((writer) => writer.token)
    const todos = await Promise.all(owners.map(async (owner) => (await make.todo(owner)).id))
    const patched = await Promise.all(
      owners.map((owner, i) => t.request({ method: 'PATCH', url: `/users/${owner.id}/todos/${todos[i]}`, token: tokens[i], json: { completed: true } })),
    )
    expect(statuses(patched)).toEqual(Array(30).fill(200))
    const renamed = await Promise.all(
      owners.map((owner, i) => t.request({ method: 'PATCH', url: `/users/${owner.id}`, token: tokens[i], json: { name: `Renamed ${i}` } })),
    )
    expect(statuses(renamed)).toEqual(Array(30).fill(200))
  })

  it('applies 30 changes of one row one after another, none lost', async () => {
    const todo = (await make.todo(t.bob)).id
    const patched = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.request({ method: 'PATCH', url: `/users/${t.bob.id}/todos/${todo}`, token: t.tokens.bob, json: { text: `v${i}` } }),
      ),
    )
    expect(statuses(patched)).toEqual(Array(30).fill(200))
    const texts = new Set(patched.map((res) => res.json().data.text as string))
    expect(texts.size).toBe(30)
    const last = (await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos/${todo}` })).json().data.text as string
    expect(texts.has(last)).toBe(true)
  })

  it('keeps one admin when two admins demote each other at the same moment', async () => {
    const { user: second, token: secondToken } = await make.signedIn({ role: 'admin' })
    // Two admins now: each demotes the other; only one may succeed.
    const [a, b] = await Promise.all([
      t.request({ method: 'PATCH', url: `/users/${second.id}`, token: t.tokens.admin, json: { role: 'user' } }),
      t.request({ method: 'PATCH', url: `/users/${t.admin.id}`, token: secondToken, json: { role: 'user' } }),
    ])
    // One wins. The other is refused: 409 when both were checked as admins (the last admin stays),
    // or 403 when the winner's change landed first and the loser is no longer an admin (rights are
    // read when used, not when the request began).
    const [won, lost] = [a.statusCode, b.statusCode].sort()
    expect(won).toBe(200)
    expect([403, 409]).toContain(lost)
    const admins = (await t.request({ method: 'GET', url: '/users?role=admin' })).json().data as unknown[]
    expect(admins).toHaveLength(1)
  })

  it('answers a comment racing its post being deleted with 201 or 404, never a failure', async () => {
    for (let i = 0; i < 10; i++) {
      const post = (await make.post(t.alice, { title: `race ${i}` })).id
      const [comment, removed] = await Promise.all([
        t.request({ method: 'POST', url: `/users/${t.alice.id}/posts/${post}/comments`, token: t.tokens.bob, json: { content: 'first!' } }),
        t.request({ method: 'DELETE', url: `/users/${t.alice.id}/posts/${post}`, token: t.tokens.alice }),
      ])
      expect([201, 404]).toContain(comment.statusCode)
      expect(removed.statusCode).toBe(204)
    }
  })
})
