// Text a person could not see, or that breaks the line it is shown on, is refused in one-line fields
// (names, titles, todos) and as the whole of a multi-line one (post and comment content), by REST
// and GraphQL alike (docs/security.md, API8). Legitimate text in any script, and emoji, still pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'

const LINE_MESSAGE = 'must not be blank or contain control or invalid characters'

/** Made only of characters that draw nothing: zero-width space, soft hyphen, braille blank, Hangul fillers, word joiner, BOM, a lone combining mark. */
const INVISIBLE = ['\u200B', '\u00AD', '\u2800', '\u3164', '\uFFA0', '\u3164\u3164\u3164', ' \u200B ', '\u2060', '\uFEFF', '\u0301', '\u3000', '\u200D']
/** Visible, but with a character that reorders or breaks the line it is shown on. */
const LINE_BREAKING = ['Bob\u202Etxt.exe', 'Bob\u202D', '\u2066Bob\u2069', 'Bob\u2028Evil', 'Bob\u2029Evil', 'Bob\u202A', 'Bob\tTab']
/** Names people have: accents, scripts written right to left, CJK, Indic, emoji with joiners and flags. */
const LEGITIMATE = [
  'José Ñúñez',
  'Zoë Ångström',
  '山田太郎',
  '김민준',
  'محمد علي',
  'דוד כהן',
  'דוד\u200F 2',
  'می\u200Cخواهم',
  'नमस्ते',
  'สมชาย',
  'Jose\u0301',
  '👩‍💻',
  '👩‍👩‍👧‍👦 family',
  '🏴󠁧󠁢󠁥󠁮󠁧󠁿',
  '1\uFE0F\u20E3',
  'Ada\u00A0Lovelace',
]
const show = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

let t: TestApp
let postId: number
beforeAll(async () => {
  t = await buildTestApp()
  postId = (await createFactories(t).post(t.alice)).id
})
afterAll(() => t.close())

async function createUser(name: string, index: number) {
  return t.request({ method: 'POST', url: '/api/v1/users', token: t.tokens.admin, json: { name, email: `person${index}-${Date.now()}@example.com` } })
}

function expectRefused(res: { statusCode: number; json(): { error: { code: string; details: unknown[] } } }, field: string, message = LINE_MESSAGE) {
  expect(res.statusCode).toBe(422)
  const { error } = res.json()
  expect(error.code).toBe('VALIDATION_ERROR')
  expect(error.details).toEqual([{ field, message }])
}

describe('one-line fields', () => {
  it.each([...INVISIBLE, ...LINE_BREAKING].map((text) => [show(text), text]))('refuses the user name %s with 422 naming the field', async (_shown, name) => {
    expectRefused(await createUser(name, 1), 'name')
  })

  it.each(LEGITIMATE.map((text) => [show(text), text]))('accepts the user name %s', async (_shown, name) => {
    const res = await createUser(name, LEGITIMATE.indexOf(name) + 100)
    expect(res.statusCode).toBe(201)
    expect(res.json().data.name).toBe(name)
  })

  it('refuses a post title, a todo text and a renamed user alike', async () => {
    for (const text of ['\u200B\u200B', '\u3164', 'Title\u202Egnp.exe', 'Two\u2028lines']) {
      expectRefused(
        await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: text, content: 'x' } }),
        'title',
      )
      expectRefused(await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/todos`, token: t.tokens.alice, json: { text } }), 'text')
      expectRefused(await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.alice, json: { name: text } }), 'name')
    }
  })

  it('is the same rule over GraphQL', async () => {
    for (const text of ['\u2800', '\u00AD', 'Bob\u202E', 'a\u2028b']) {
      const answer = await graphql(t, 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', {
        token: t.tokens.admin,
        variables: { input: { name: text, email: 'gql-invisible@example.com' } },
      })
      expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'name', message: LINE_MESSAGE }] })
      const todo = await graphql(t, 'mutation ($text: String!) { addTodo(text: $text) { id } }', { token: t.tokens.alice, variables: { text } })
      expect(todo.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'text' }] })
    }
    const ok = await graphql(t, 'mutation ($input: CreateUserInput!) { createUser(input: $input) { name } }', {
      token: t.tokens.admin,
      variables: { input: { name: '👩‍💻 محمد', email: 'gql-visible@example.com' } },
    })
    expect(ok.body.data).toEqual({ createUser: { name: '👩‍💻 محمد' } })
  })
})

describe('multi-line fields', () => {
  const comment = (content: string) =>
    t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${postId}/comments`, token: t.tokens.bob, json: { content } })
  const post = (content: string) =>
    t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: 'T', content } })

  it.each(INVISIBLE.map((text) => [show(text), text]))('refuses a comment or post content of only %s', async (_shown, content) => {
    const commented = await comment(content)
    expect(commented.statusCode).toBe(422)
    expect(commented.json().error.details).toEqual([{ field: 'content', message: expect.any(String) }])
    const posted = await post(content)
    expect(posted.statusCode).toBe(422)
    expect(posted.json().error.details).toEqual([{ field: 'content', message: expect.any(String) }])
  })

  it('keeps line breaks, tabs and bidirectional text in content, and lets a post have none', async () => {
    for (const content of ['First line\nsecond line\r\n\tindented', 'Para one\u2029Para two\u2028line', 'עברית \u202Bembedded\u202C', '👩‍💻']) {
      expect((await comment(content)).statusCode).toBe(201)
      expect((await post(content)).statusCode).toBe(201)
    }
    expect((await post('')).statusCode).toBe(201)
  })
})
