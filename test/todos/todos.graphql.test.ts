// Todos read over GraphQL: one by its id (todo) and every todo (todos, todosPage, todosConnection),
// with REST's rights: anyone reads every user's todos. (What every collection's list, page and
// connection share is test/graphql/collection-fields.test.ts's.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Todo } from '../../src/todos/todos.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('todos over GraphQL', () => {
  let t: TestApp
  const made: Todo[] = []

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    made.push(await make.todo(t.alice, { text: 'Water plants' }))
    made.push(await make.todo(t.bob, { text: 'Buy milk' }))
    made.push(await make.todo(t.alice, { text: 'Call mum' }))
    const done = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}/todos/${made[2]?.id}`, token: t.tokens.alice, json: { completed: true } })
    expect(done.statusCode).toBe(200)
  })
  afterAll(() => t.close())

  it('lists every todo of every user to anyone, as REST shows them: in todos, todosPage and todosConnection alike', async () => {
    const query = `{
      todos { text completed user { name } }
      todosPage { items { text } pageInfo { total } }
      todosConnection { edges { node { text } } totalCount }
    }`
    const expected = [
      { text: 'Water plants', completed: false, user: { name: 'Alice' } },
      { text: 'Buy milk', completed: false, user: { name: 'Bob' } },
      { text: 'Call mum', completed: true, user: { name: 'Alice' } },
    ]
    for (const token of [undefined, t.tokens.bob, t.tokens.admin]) {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors).toBeUndefined()
      const data = answer.body.data as {
        todos: unknown[]
        todosPage: { items: { text: string }[]; pageInfo: { total: number } }
        todosConnection: { edges: { node: { text: string } }[]; totalCount: number }
      }
      expect(data.todos).toEqual(expected)
      expect(data.todosPage).toEqual({ items: expected.map(({ text }) => ({ text })), pageInfo: { total: 3 } })
      expect(data.todosConnection).toEqual({ edges: expected.map(({ text }) => ({ node: { text } })), totalCount: 3 })
    }
    const overRest = []
    for (const user of [t.admin, t.alice, t.bob]) {
      overRest.push(...((await t.request({ method: 'GET', url: `/api/v1/users/${user.id}/todos` })).json().data as Todo[]))
    }
    expect(overRest.map((todo) => todo.id).sort((a, b) => a - b)).toEqual(made.map((todo) => todo.id))
  })

  it("narrows to one user's todos by userId, and by completed, text and other fields", async () => {
    const texts = async (args: string) => {
      const answer = await graphql(t, `{ todos(${args}) { text } }`)
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.todos as { text: string }[]).map((todo) => todo.text)
    }
    expect(await texts(`where: {userId: {eq: "${t.alice.id}"}}`)).toEqual(['Water plants', 'Call mum'])
    expect(await texts(`filter: {userId: ["${t.bob.id}"]}`)).toEqual(['Buy milk'])
    expect(await texts('where: {userId: {eq: "999999"}}')).toEqual([])
    expect(await texts('where: {completed: {eq: true}}')).toEqual(['Call mum'])
    expect(await texts(`where: {userId: {eq: "${t.alice.id}"}, completed: {eq: false}}`)).toEqual(['Water plants'])
    expect(await texts('sort: "text"')).toEqual(['Buy milk', 'Call mum', 'Water plants'])
    expect(await texts('sort: "-completed,text"')).toEqual(['Call mum', 'Buy milk', 'Water plants'])
    expect(await texts('q: "mil"')).toEqual(['Buy milk'])
  })

  it('answers todo(id) to anyone, and NOT_FOUND for an id that names no todo', async () => {
    const query = 'query($id: ID!) { todo(id: $id) { text completed user { name } } }'
    expect((await graphql(t, query, { variables: { id: String(made[1]?.id) } })).body).toEqual({
      data: { todo: { text: 'Buy milk', completed: false, user: { name: 'Bob' } } },
    })
    for (const id of ['999999', 'nope']) {
      const missing = await graphql(t, query, { variables: { id } })
      expect([missing.body.data, codesOf(missing)]).toEqual([{ todo: null }, ['NOT_FOUND']])
    }
  })
})
